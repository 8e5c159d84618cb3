package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;

import com.example.payments.testing.RedisServer;

/**
 * {@link SeveralReplicasContract} on the Redis registry in front of PostgreSQL, with every value under the key prefix
 * scanned for card data.
 */
class RedisReplicasIT extends SeveralReplicasContract {

    private RedisServer redis;

    RedisReplicasIT() {
        super(Duration.ofSeconds(20), Duration.ofSeconds(30));
    }

    @Override
    StoreBackend startBackend() throws Exception {
        return StoreBackend.onRedis(server -> redis = server);
    }

    @Override
    List<List<String>> backendValues() {
        return List.of(RedisScan.valuesUnder(redis.uri(), "payments-authorization:"));
    }

    @Override
    List<Integer> contendedStatuses() {
        return List.of(201, 409);
    }
}
