package com.example.payments;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.example.payments.testing.Http;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The resource-retention suite with Redis as the registry in front of the PostgreSQL system of record, and Redis
 * losing its records (a restart without persistence) while a request is in flight: the key stays bound to it.
 */
class RedisResourceRetentionTest extends ResourceRetentionContract {

    private RedisServer redis;
    private PostgresServer postgres;

    @Override
    Map<String, String> backend() throws IOException {
        redis = RedisServer.start();
        postgres = PostgresServer.start();
        return Map.of("idempotency.store", "redis", "idempotency.redis.uri", redis.uri(),
                      "database.url", postgres.url(), "database.username", PostgresServer.USER);
    }

    @Test
    void aKeyWhoseRequestIsInFlightWhenRedisLosesItsRecordsRefusesAnotherBody() throws Exception {
        Map<String, String> slow = new HashMap<>(config());
        slow.put("authorizer.simulated-latency", "PT4S");
        try (TestService service = TestService.start(slow);
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            String key = key();
            Future<HttpResponse<String>> first = threads.submit(() -> service.post(key, Http.VALID_BODY));
            Thread.sleep(500);
            redis.restart();
            // The client reconnects to the restarted Redis meanwhile (503, retryable): retry like a client would.
            HttpResponse<String> other;
            do {
                other = service.post(key, Http.VALID_BODY.replace("\"value\":1299", "\"value\":1300"));
            } while (other.statusCode() == 503 && !first.isDone() && sleep());
            assertThat("the first request still runs", first.isDone(), is(false));
            assertThat(other.body(), other.statusCode(), is(422));
            HttpResponse<String> created = first.get();
            assertThat(created.body(), created.statusCode(), is(201));
            HttpResponse<String> again = service.post(key, Http.VALID_BODY);
            assertThat(again.statusCode(), is(201));
            assertThat("the same authorization, never a second one", again.body(), is(created.body()));
        }
    }

    private static boolean sleep() throws InterruptedException {
        Thread.sleep(100);
        return true;
    }

    @Override
    void stopBackend() {
        if (redis != null) {
            redis.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }
}
