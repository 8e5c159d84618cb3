package com.example.payments.redis;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * Waiting for Lettuce futures with a deadline, and turning Lettuce's exceptions into one short line (they nest the
 * reason, e.g. {@code Connection refused}, several causes deep).
 */
final class RedisReplies {

    private static final System.Logger LOGGER = System.getLogger(RedisConnection.class.getName());

    private RedisReplies() {
    }

    /**
     * Waits for a reply until the deadline. A virtual thread parks here without pinning its carrier: Lettuce
     * completes the future from its Netty event loop.
     *
     * @param reply    the pending reply
     * @param deadline {@link System#nanoTime()} by which it must be there
     * @param <T>      reply type
     * @return the reply
     * @throws RedisException the command's own failure (e.g. {@link io.lettuce.core.RedisNoScriptException}), a
     *                        {@link RedisCommandTimeoutException} at the deadline, or a
     *                        {@link RedisCommandInterruptedException} (the interrupt flag is kept)
     */
    static <T> T await(CompletionStage<T> reply, long deadline) {
        CompletableFuture<T> future = reply.toCompletableFuture();
        try {
            return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new RedisCommandTimeoutException("no answer within the command timeout");
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisException redis) {
                throw redis;
            }
            throw new RedisException(e.getCause());
        }
    }

    /**
     * The innermost useful message of a failure, e.g. {@code Connection refused: /127.0.0.1:6390}. Never contains the
     * password: Lettuce's messages name host and port only.
     *
     * @param failure what Lettuce threw
     * @return one line
     */
    static String describe(Throwable failure) {
        Throwable cause = failure;
        String message = failure.getMessage();
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
            if (cause.getMessage() != null) {
                message = cause.getMessage();
            }
        }
        return message == null ? cause.getClass().getSimpleName() : message;
    }

    /**
     * Logs a warning when Redis may evict keys: every key this service writes has a TTL, so any policy but
     * {@code noeviction} (including the {@code volatile-*} ones) can drop an idempotency record before its retention
     * ends, and a retry would then authorize a second time. Managed Redis often refuses {@code CONFIG}; then this says
     * nothing.
     */
    static void warnUnlessNoEviction(StatefulRedisConnection<String, byte[]> connection, Duration timeout) {
        try {
            Map<String, String> config = await(connection.async().configGet("maxmemory-policy"),
                                               System.nanoTime() + timeout.toNanos());
            String policy = config.get("maxmemory-policy");
            if (policy != null && !"noeviction".equals(policy)) {
                LOGGER.log(Level.WARNING, "Redis maxmemory-policy is {0}: when memory runs out Redis may evict "
                                          + "idempotency records before their retention ends, and a retry would then "
                                          + "authorize twice. Set maxmemory-policy noeviction.", policy);
            }
        } catch (RedisException e) {
            LOGGER.log(Level.DEBUG, "Cannot read maxmemory-policy: {0}", describe(e));
        }
    }
}
