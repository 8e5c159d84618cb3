package com.example.payments;

import java.io.IOException;
import java.util.Map;

import com.example.payments.testing.PostgresServer;

/**
 * The authorization API suite on {@code idempotency.store: postgres}, a private PostgreSQL: the authorizations and
 * their keys in the system of record.
 */
class PostgresAuthorizationApiTest extends AuthorizationApiContract {

    private PostgresServer postgres;

    @Override
    Map<String, String> backend() throws IOException {
        postgres = PostgresServer.start();
        return Map.of("idempotency.store", "postgres", "database.url", postgres.url(),
                      "database.username", PostgresServer.USER);
    }

    @Override
    void stopBackend() {
        if (postgres != null) {
            postgres.close();
        }
    }
}
