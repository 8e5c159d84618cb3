package com.example.payments;

import java.io.IOException;
import java.util.Map;

import com.example.payments.testing.PostgresServer;

/** The capture and void suite on the PostgreSQL resource store. */
class PostgresCaptureApiTest extends CaptureApiContract {

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
