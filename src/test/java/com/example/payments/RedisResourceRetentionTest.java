package com.example.payments;

import java.io.IOException;
import java.util.Map;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;

/** The resource-retention suite with Redis as the registry in front of the PostgreSQL system of record. */
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
