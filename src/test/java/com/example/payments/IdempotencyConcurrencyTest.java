package com.example.payments;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

/**
 * No payment is authorized twice: concurrent identical requests with one key run the authorizer exactly once.
 */
class IdempotencyConcurrencyTest {

    @Test
    void twoHundredConcurrentIdenticalRequestsRunTheAuthorizerExactlyOnce() throws Exception {
        // A little latency keeps the first request in flight while the others arrive, so 409s really happen.
        try (TestService service = TestService.start(Map.of("authorizer.simulated-latency", "PT0.3S"))) {
            double before = service.authorizerInvocations();
            CountDownLatch go = new CountDownLatch(1);
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 200; i++) {
                    answers.add(clients.submit(() -> {
                        go.await();
                        return service.post("\"one-key-for-all\"", Http.VALID_BODY);
                    }));
                }
                go.countDown();
            }
            String original = null;
            int replays = 0;
            int conflicts = 0;
            for (Future<HttpResponse<String>> answer : answers) {
                HttpResponse<String> response = answer.get();
                assertThat(Set.of(201, 409).contains(response.statusCode()), is(true));
                if (response.statusCode() == 201) {
                    if (response.headers().firstValue("Idempotent-Replayed").isPresent()) {
                        replays++;
                    } else {
                        assertThat("only one original 201", original, is((String) null));
                        original = response.body();
                    }
                } else {
                    conflicts++;
                    assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
                }
            }
            assertThat(original != null, is(true));
            assertThat(service.authorizerInvocations() - before, is(1.0));
            // Every 201 carries the original body byte for byte.
            for (Future<HttpResponse<String>> answer : answers) {
                if (answer.get().statusCode() == 201) {
                    assertThat(answer.get().body(), is(original));
                }
            }
            assertThat(replays + conflicts, is(199));
            assertThat(answers, hasSize(200));
        }
    }
}
