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

    // 503 store-unavailable (with Retry-After, checked by the scenario) is the registry failing closed when a claim
    // waits past its command timeout (0.5 s here), as 500 concurrent requests on a loaded 2-core machine can make it:
    // a refused request, never a second authorization.
    @Override
    List<Integer> contendedStatuses() {
        return List.of(201, 409, 503);
    }
}
