package com.example.payments;

import java.io.IOException;
import java.util.Map;

import com.example.payments.testing.RedisServer;

/** The authorization API suite on {@code idempotency.store: redis}, a private {@code redis-server}. */
class RedisAuthorizationApiTest extends AuthorizationApiContract {

    private RedisServer redis;

    @Override
    Map<String, String> backend() throws IOException {
        redis = RedisServer.start();
        return Map.of("idempotency.store", "redis", "idempotency.redis.uri", redis.uri());
    }

    @Override
    void stopBackend() {
        if (redis != null) {
            redis.close();
        }
    }
}
