package com.example.payments.idempotency;

import java.util.HashMap;
import java.util.Map;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;

/**
 * Valid configurations for the fault tests (the lease floor holds: lease > authorizer.timeout + the store's worst
 * case), with a simulated issuer call that a pause or a restart can fall into.
 */
final class FaultConfigs {

    private FaultConfigs() {
    }

    /**
     * In memory: lease 2 s > authorizer timeout 1 s + 0; the call takes 0.8 s.
     *
     * @param extra more key-value pairs
     * @return the properties
     */
    static Map<String, String> inMemory(String... extra) {
        Map<String, String> config = new HashMap<>(Map.of(
                "authorizer.timeout", "PT1S", "authorizer.simulated-latency", "PT0.8S",
                "idempotency.in-flight-lease", "PT2S"));
        for (int i = 0; i < extra.length; i += 2) {
            config.put(extra[i], extra[i + 1]);
        }
        return config;
    }

    /**
     * Redis: lease 3 s > authorizer timeout 1 s + 3 x command timeout 0.5 s; the call takes 0.8 s. The authorizations
     * live in PostgreSQL behind the Redis registry, as in every environment ({@code database.*} is required with
     * redis).
     *
     * @param redis    the test's Redis
     * @param postgres the test's PostgreSQL, the system of record
     * @param extra    more key-value pairs
     * @return the properties
     */
    static Map<String, String> redis(RedisServer redis, PostgresServer postgres, String... extra) {
        Map<String, String> config = inMemory("idempotency.in-flight-lease", "PT3S");
        config.put("idempotency.store", "redis");
        config.put("idempotency.redis.uri", redis.uri());
        config.put("database.url", postgres.url());
        config.put("database.username", PostgresServer.USER);
        config.put("idempotency.fingerprint-secret", "it-test-fingerprint-secret");
        for (int i = 0; i < extra.length; i += 2) {
            config.put(extra[i], extra[i + 1]);
        }
        return config;
    }
}
