package com.example.payments;

import java.io.IOException;
import java.util.Map;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;

/**
 * The authorization API suite on {@code idempotency.store: redis}, a private {@code redis-server} as the registry in
 * front of a private PostgreSQL (the system of record, required behind Redis).
 */
class RedisAuthorizationApiTest extends AuthorizationApiContract {

    private RedisServer redis;
    private PostgresServer postgres;

    @Override
    Map<String, String> backend() throws IOException {
        redis = RedisServer.start();
        postgres = PostgresServer.start();
        return Map.of("idempotency.store", "redis", "idempotency.redis.uri", redis.uri(),
                      "database.url", postgres.url(), "database.username", PostgresServer.USER);
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
