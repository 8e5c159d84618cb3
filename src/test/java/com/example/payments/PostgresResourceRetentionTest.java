package com.example.payments;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.Map;

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/** The resource-retention suite on {@code idempotency.store: postgres}, and across a restart of the service. */
class PostgresResourceRetentionTest extends ResourceRetentionContract {

    private PostgresServer postgres;

    @Override
    Map<String, String> backend() throws IOException {
        postgres = PostgresServer.start();
        return Map.of("idempotency.store", "postgres", "database.url", postgres.url(),
                      "database.username", PostgresServer.USER);
    }

    @Test
    void anAuthorizationIsReadAfterARestartOnceTheRetentionHasPassed() throws Exception {
        String location;
        String created;
        try (TestService first = TestService.start(config())) {
            HttpResponse<String> response = first.post(key(), Http.VALID_BODY);
            assertThat(response.statusCode(), is(201));
            location = response.headers().firstValue("Location").orElseThrow();
            created = response.body();
        }
        Thread.sleep(PAST_RETENTION_MS);
        try (TestService second = TestService.start(config())) {
            HttpResponse<String> read = second.get(second.business(location));
            assertThat(read.statusCode(), is(200));
            assertThat(read.body(), is(created));
        }
    }

    @Override
    void stopBackend() {
        if (postgres != null) {
            postgres.close();
        }
    }
}
