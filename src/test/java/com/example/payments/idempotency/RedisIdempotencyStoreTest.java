package com.example.payments.idempotency;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;

import com.example.payments.testing.RedisServer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** The store contract, unchanged, against {@link RedisIdempotencyStore} on a private {@code redis-server}. */
class RedisIdempotencyStoreTest extends IdempotencyStoreContract {

    private static RedisServer server;
    private static RedisConnection connection;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void startRedis() throws IOException {
        if (RedisServer.installed()) {
            server = RedisServer.start();
            connection = RedisConnection.create(settings(server.uri(), 0));
            store = RedisIdempotencyStore.create(connection);
        }
    }

    @BeforeEach
    void requireRedis() {
        RedisServer.assumeInstalled();
    }

    @AfterAll
    static void stopRedis() {
        if (connection != null) {
            connection.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    IdempotencyStore store() {
        return store;
    }

    static IdempotencySettings.RedisSettings settings(String uri, int minReplicasAck) {
        return settings(uri, minReplicasAck, Duration.ofMillis(500));
    }

    static IdempotencySettings.RedisSettings settings(String uri, int minReplicasAck, Duration commandTimeout) {
        return new IdempotencySettings.RedisSettings(URI.create(uri), "payments-authorization-test:",
                                                     Duration.ofSeconds(1), commandTimeout, minReplicasAck);
    }
}
