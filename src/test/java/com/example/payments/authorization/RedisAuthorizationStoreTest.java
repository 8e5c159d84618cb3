package com.example.payments.authorization;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.RedisConnection;
import com.example.payments.testing.RedisServer;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RedisAuthorizationStoreTest {

    private static final Authorization AUTHORIZATION = new Authorization(UUID.randomUUID().toString(), "DECLINED",
            "card_declined", "m_123", null, new Amount(1299, "EUR"), new Authorization.CardSummary("visa", "0002"),
            "2026-01-01T00:00:00.000Z");

    @Test
    void aSavedAuthorizationIsFoundWithEveryFieldAndExpiresAfterTheRetention() throws Exception {
        try (RedisServer server = RedisServer.start(); RedisConnection redis = connect(server)) {
            RedisAuthorizationStore store = RedisAuthorizationStore.create(redis, Duration.ofHours(24));
            store.save(AUTHORIZATION);

            assertThat(store.find(AUTHORIZATION.id()), is(Optional.of(AUTHORIZATION)));
            long ttl = redis.call("ttl", commands -> commands.pttl("test:authorization:" + AUTHORIZATION.id()));
            assertThat(ttl, allOf(greaterThan(Duration.ofHours(23).toMillis()),
                                  lessThanOrEqualTo(Duration.ofHours(24).toMillis())));
        }
    }

    @Test
    void anUnknownIdIsNotFound() throws Exception {
        try (RedisServer server = RedisServer.start(); RedisConnection redis = connect(server)) {
            assertThat(RedisAuthorizationStore.create(redis, Duration.ofHours(1)).find("nope"), is(Optional.empty()));
        }
    }

    @Test
    void anUnreachableRedisIsReportedAsUnavailable() throws Exception {
        try (RedisServer server = RedisServer.start(); RedisConnection redis = connect(server)) {
            RedisAuthorizationStore store = RedisAuthorizationStore.create(redis, Duration.ofHours(1));
            server.stop();
            assertThrows(AuthorizationStore.StoreUnavailableException.class, () -> store.find("any"));
            assertThrows(AuthorizationStore.StoreUnavailableException.class, () -> store.save(AUTHORIZATION));
        }
    }

    private static RedisConnection connect(RedisServer server) {
        return RedisConnection.create(new IdempotencySettings.RedisSettings(URI.create(server.uri()), "test:",
                Duration.ofSeconds(1), Duration.ofMillis(500), 0));
    }
}
