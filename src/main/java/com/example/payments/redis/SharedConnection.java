package com.example.payments.redis;

import java.lang.System.Logger.Level;
import java.util.concurrent.locks.ReentrantLock;

import com.example.payments.idempotency.IdempotencyStore;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.RedisCodec;

/**
 * The one Lettuce connection every request pipelines its commands on, connected on first use and failing fast while
 * it cannot be: one caller connects (bounded by {@code idempotency.redis.connect-timeout}) and the others are refused
 * at once instead of queueing behind it, and after a failed attempt the next one waits
 * {@link RedisClients#RECONNECT_INTERVAL} (1 s), each refusal naming the last failure. Once connected, Lettuce
 * reconnects by itself.
 */
final class SharedConnection implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(SharedConnection.class.getName());

    private final RedisClient client;
    private final RedisURI uri;
    private final RedisCodec<String, byte[]> codec;
    private final RedisSettings settings;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile StatefulRedisConnection<String, byte[]> connection;
    private volatile long nextAttemptNanos = System.nanoTime();
    private volatile String lastFailure = "not connected yet";

    SharedConnection(RedisClient client, RedisURI uri, RedisCodec<String, byte[]> codec, RedisSettings settings) {
        this.client = client;
        this.uri = uri;
        this.codec = codec;
        this.settings = settings;
    }

    /**
     * The connection, connected first if need be.
     *
     * @return the connection
     * @throws IdempotencyStore.UnavailableException when it is not connected and cannot be now: another caller is
     *                                               connecting, the last attempt was less than 1 s ago, or this one
     *                                               failed
     */
    StatefulRedisConnection<String, byte[]> get() {
        StatefulRedisConnection<String, byte[]> current = connection;
        if (current != null) {
            return current;
        }
        if (!connecting.tryLock()) {
            throw new IdempotencyStore.UnavailableException("Redis: not connected, another request is connecting "
                                                            + "(last failure: " + lastFailure + ")", null);
        }
        try {
            if (connection != null) {
                return connection;
            }
            if (System.nanoTime() - nextAttemptNanos < 0) {
                throw new IdempotencyStore.UnavailableException("Redis: not connected: " + lastFailure, null);
            }
            nextAttemptNanos = System.nanoTime() + RedisClients.RECONNECT_INTERVAL.toNanos();
            StatefulRedisConnection<String, byte[]> connected = client.connect(codec, uri);
            LOGGER.log(Level.INFO, "Connected to Redis: {0}", settings);
            RedisReplies.warnUnlessNoEviction(connected, settings.commandTimeout());
            connection = connected;
            return connected;
        } catch (RedisException e) {
            lastFailure = RedisReplies.describe(e);
            throw RedisConnection.unavailable("connect to " + uri.getHost() + ":" + uri.getPort(), e);
        } finally {
            connecting.unlock();
        }
    }

    /** Closes the connection if there is one (the client's threads are its owner's to stop). */
    @Override
    public void close() {
        StatefulRedisConnection<String, byte[]> current = connection;
        if (current != null) {
            current.close();
        }
    }
}
