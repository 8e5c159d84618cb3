package com.example.payments.idempotency;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;

import com.example.payments.testing.RedisServer;

/**
 * The idempotency store a scenario over the wire runs the service on, as the scenario's subclass started it
 * ({@link SeveralReplicasContract}, {@link StoreOutageContract}): the service's configuration of it, and what to stop
 * afterwards. PostgreSQL, the system of record behind every backend, is the scenario's own.
 *
 * @param config  {@code idempotency.*} and any bounds the backend needs
 * @param servers stops the servers the subclass started for it
 */
record StoreBackend(Map<String, String> config, AutoCloseable servers) implements AutoCloseable {

    /**
     * A backend with no server besides PostgreSQL.
     *
     * @param config {@code idempotency.*} and any bounds it needs
     * @return the backend
     */
    static StoreBackend onPostgres(Map<String, String> config) {
        return new StoreBackend(config, () -> { });
    }

    /**
     * The Redis registry in front of PostgreSQL, on a private Redis server started for it (the test skipped when
     * {@code redis-server} is not installed), stopped with the backend.
     *
     * @param started gets the server, for the test to stop, restart or read it
     * @return the backend
     * @throws IOException when the server does not start
     */
    static StoreBackend onRedis(Consumer<RedisServer> started) throws IOException {
        RedisServer.assumeInstalled();
        RedisServer redis = RedisServer.start();
        started.accept(redis);
        return new StoreBackend(Map.of("idempotency.store", "redis", "idempotency.redis.uri", redis.uri()), redis);
    }

    @Override
    public void close() throws Exception {
        servers.close();
    }
}
