package com.example.payments.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.support.AsyncConnectionPoolSupport;
import io.lettuce.core.support.BoundedAsyncPool;
import io.lettuce.core.support.BoundedPoolConfig;

/**
 * Writes that must reach replicas before the service acts on them ({@code idempotency.redis.min-replicas-ack} above
 * 0): the script, bounded by the command timeout, then {@code WAIT numreplicas timeout} on the same connection with
 * the command timeout as its timeout (opening a pooled connection, when one is needed, is bounded by the connect
 * timeout before that).
 *
 * <p>{@code WAIT} blocks the connection it is sent on until the replicas confirm or its timeout passes, so it must
 * not run on the shared connection, where it would stall every other request's commands behind it (and, with the
 * replicas gone, for the whole timeout). Each replicated write borrows one of {@value #CONNECTIONS} pooled
 * connections instead. A replica that confirms a write has every write the primary processed before it (they share
 * one replication stream).
 */
final class ReplicatedWrites implements AutoCloseable {

    /** Connections for replicated writes, and so the most claims or completions waiting for replicas at once. */
    static final int CONNECTIONS = 16;

    /** Extra wait for {@code WAIT}'s own reply after its server-side timeout. */
    private static final Duration REPLY_MARGIN = Duration.ofMillis(100);

    /**
     * The outcome of a replicated write.
     *
     * @param reply     the script's reply
     * @param replicas  replicas that confirmed the write (0 when the script wrote nothing)
     * @param confirmed {@code true} when the script wrote nothing or at least the required replicas confirmed it
     */
    record Result(Object reply, long replicas, boolean confirmed) {
    }

    private final BoundedAsyncPool<StatefulRedisConnection<String, byte[]>> pool;
    private final Semaphore permits = new Semaphore(CONNECTIONS);
    private final int required;
    private final Duration connectTimeout;
    private final Duration commandTimeout;

    ReplicatedWrites(RedisClient client, RedisURI uri, RedisCodec<String, byte[]> codec, int required,
                     Duration connectTimeout, Duration commandTimeout) {
        this.required = required;
        this.connectTimeout = connectTimeout;
        this.commandTimeout = commandTimeout;
        // minIdle 0: nothing connects here, so an unreachable Redis does not fail startup.
        this.pool = AsyncConnectionPoolSupport.createBoundedObjectPool(
                () -> client.connectAsync(codec, uri),
                BoundedPoolConfig.builder().maxTotal(CONNECTIONS).maxIdle(CONNECTIONS).minIdle(0).build(), false);
    }

    /**
     * Opens every pooled connection ahead of the first writes, so a burst right after startup does not wait for
     * connections (and time out on the command timeout while it does).
     *
     * @throws io.lettuce.core.RedisException when Redis cannot be reached within the connect timeout
     */
    void warmUp() {
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        List<CompletableFuture<StatefulRedisConnection<String, byte[]>>> opening = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
            opening.add(pool.acquire());
        }
        try {
            for (CompletableFuture<StatefulRedisConnection<String, byte[]>> connection : opening) {
                RedisReplies.await(connection, deadline);
            }
        } finally {
            opening.forEach(connection -> connection.thenAccept(pool::release));
        }
    }

    /**
     * Runs the script and, if it wrote, waits for the required replicas.
     *
     * @param script the script
     * @param wrote  tells from the reply whether the script wrote
     * @param keys   its keys
     * @param args   its arguments
     * @return reply and replication
     * @throws io.lettuce.core.RedisException when Redis cannot be reached or the command timeout passes
     */
    Result eval(LuaScript script, Predicate<Object> wrote, String[] keys, byte[][] args) {
        acquirePermit(System.nanoTime() + commandTimeout.toNanos());
        try {
            // A new pooled connection is bounded by the connect timeout; the commands by the command timeout.
            StatefulRedisConnection<String, byte[]> connection = RedisReplies.await(
                    pool.acquire(), System.nanoTime() + connectTimeout.toNanos());
            long deadline = System.nanoTime() + commandTimeout.toNanos();
            try {
                Object reply = script.run(connection.async(), keys, args, deadline);
                if (!wrote.test(reply)) {
                    return new Result(reply, 0, true);
                }
                long replicas = waitForReplicas(connection);
                return new Result(reply, replicas, replicas >= required);
            } finally {
                pool.release(connection);
            }
        } finally {
            permits.release();
        }
    }

    private long waitForReplicas(StatefulRedisConnection<String, byte[]> connection) {
        // WAIT 0 would block forever: always at least 1 ms.
        long timeoutMillis = Math.max(1, commandTimeout.toMillis());
        try {
            return RedisReplies.await(connection.async().waitForReplication(required, timeoutMillis),
                                      System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
                                      + REPLY_MARGIN.toNanos());
        } catch (RedisCommandTimeoutException e) {
            // The write happened; only its replication is unknown, which counts as not confirmed.
            return 0;
        }
    }

    private void acquirePermit(long deadline) {
        try {
            if (!permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new RedisCommandTimeoutException("all " + CONNECTIONS + " connections for replicated writes "
                                                       + "stayed busy for the command timeout");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new io.lettuce.core.RedisCommandInterruptedException(e);
        }
    }

    @Override
    public void close() {
        pool.close();
    }
}
