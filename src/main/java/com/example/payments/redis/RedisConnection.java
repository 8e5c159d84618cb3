package com.example.payments.redis;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

import com.example.payments.idempotency.IdempotencyStore;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;

/**
 * The Redis client of the redis backend ({@link RedisIdempotencyStore}) and of its readiness check:
 * one Lettuce connection that every virtual thread pipelines its commands on, plus, when
 * {@code idempotency.redis.min-replicas-ack} is above 0, a small pool for writes that wait for replicas
 * ({@link ReplicatedWrites}).
 *
 * <p>Fails fast and closed: every call is bounded by {@code idempotency.redis.command-timeout} (default PT0.5S), and
 * while the connection is down commands are rejected at once instead of queued, so callers answer 503 without piling
 * up. A command whose answer was lost with the connection is never re-sent (at most once). Lettuce reconnects in the
 * background (every second at most); if Redis was unreachable when the service started, the next call after a second
 * tries again, so the process recovers by itself either way.
 * Connecting is {@link SharedConnection}'s.
 */
public final class RedisConnection implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(RedisConnection.class.getName());
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private final RedisSettings settings;
    private final ClientResources resources;
    private final RedisClient client;
    private final RedisURI uri;
    private final ReplicatedWrites replicated;
    private final SharedConnection shared;

    private RedisConnection(RedisSettings settings) {
        this.settings = settings;
        this.resources = RedisClients.resources();
        this.uri = RedisClients.uri(settings);
        this.client = RedisClients.client(settings, resources, uri);
        this.shared = new SharedConnection(client, uri, CODEC, settings);
        this.replicated = settings.minReplicasAck() > 0
                ? new ReplicatedWrites(client, uri, CODEC, settings.minReplicasAck(), settings.connectTimeout(),
                                       settings.commandTimeout())
                : null;
    }

    /**
     * Creates the client and tries to connect once; an unreachable Redis is logged, not fatal (readiness reports it
     * and the first call a second later tries again).
     *
     * @param settings {@code idempotency.redis.*}
     * @return the connection
     */
    public static RedisConnection create(RedisSettings settings) {
        RedisConnection connection = new RedisConnection(settings);
        try {
            connection.shared.get();
            if (connection.replicated != null) {
                connection.replicated.warmUp();
            }
        } catch (IdempotencyStore.UnavailableException | RedisException e) {
            LOGGER.log(Level.WARNING, "Redis not reachable at startup, will retry: {0}: {1}", settings,
                       RedisReplies.describe(e));
        }
        return connection;
    }

    /**
     * {@code idempotency.redis.key-prefix}, prepended to every key this service writes.
     *
     * @return prefix, default {@value com.example.payments.idempotency.StableNames#DEFAULT_KEY_PREFIX} (fixed across
     *         renames)
     */
    public String keyPrefix() {
        return settings.keyPrefix();
    }

    /**
     * {@code idempotency.redis.min-replicas-ack}: replicas that must confirm a new claim and a completion.
     *
     * @return replicas, default 0 (no waiting)
     */
    public int minReplicasAck() {
        return settings.minReplicasAck();
    }

    /**
     * The bound of one Redis call.
     *
     * @return {@code idempotency.redis.command-timeout}, default PT0.5S
     */
    public Duration commandTimeout() {
        return settings.commandTimeout();
    }

    /**
     * Runs one command on the shared connection and waits for its answer at most the command timeout.
     *
     * @param operation what it does, for the error message, e.g. {@code "read authorization"}
     * @param command   issues the command, e.g. {@code redis -> redis.get(key)}
     * @param <T>       reply type
     * @return the reply
     * @throws IdempotencyStore.UnavailableException when Redis cannot be reached, does not answer in time or refuses
     */
    public <T> T call(String operation, Function<RedisAsyncCommands<String, byte[]>, RedisFuture<T>> command) {
        long deadline = System.nanoTime() + settings.commandTimeout().toNanos();
        try {
            return RedisReplies.await(command.apply(shared.get().async()), deadline);
        } catch (RedisException e) {
            throw unavailable(operation, e);
        }
    }

    /**
     * Sends {@code PING}: the readiness check of the redis backend ({@code idempotency-store}).
     *
     * @param timeout how long to wait for {@code PONG}
     * @return empty when Redis answered in time, else why it is not usable
     */
    public Optional<String> check(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            RedisReplies.await(shared.get().async().ping(), deadline);
            return Optional.empty();
        } catch (RedisException e) {
            return Optional.of(unavailable("PING", e).getMessage());
        } catch (IdempotencyStore.UnavailableException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * Loads scripts into Redis ahead of their first use, so the first requests skip the {@code NOSCRIPT} round trip.
     * Best effort: an unreachable Redis is reported by readiness, and {@link #eval} loads a script it misses anyway.
     *
     * @param scripts the scripts
     */
    void preload(List<LuaScript> scripts) {
        try {
            for (LuaScript script : scripts) {
                call("load " + script.name(), redis -> redis.scriptLoad(script.source()));
            }
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.DEBUG, "Scripts not preloaded: {0}", e.getMessage());
        }
    }

    /**
     * Runs a script on the shared connection, loading it first if Redis does not know it.
     *
     * @param script the script
     * @param keys   its keys
     * @param args   its arguments
     * @return the reply
     * @throws IdempotencyStore.UnavailableException when Redis cannot be reached, refuses or does not answer in time
     */
    Object eval(LuaScript script, String[] keys, byte[]... args) {
        long deadline = System.nanoTime() + settings.commandTimeout().toNanos();
        try {
            return script.run(shared.get().async(), keys, args, deadline);
        } catch (RedisException e) {
            throw unavailable(script.name(), e);
        }
    }

    /**
     * Runs a write script and, when {@code idempotency.redis.min-replicas-ack} is above 0 and the script wrote, waits
     * for that many replicas ({@code WAIT}), each step within one command timeout.
     *
     * @param script the script
     * @param wrote  tells from the reply whether the script wrote anything
     * @param keys   its keys
     * @param args   its arguments
     * @return the reply and how many replicas confirmed it
     * @throws IdempotencyStore.UnavailableException when Redis cannot be reached, refuses or does not answer in time
     */
    ReplicatedWrites.Result evalReplicated(LuaScript script, Predicate<Object> wrote, String[] keys,
                                           byte[]... args) {
        if (replicated == null) {
            return new ReplicatedWrites.Result(eval(script, keys, args), 0, true);
        }
        try {
            return replicated.eval(script, wrote, keys, args);
        } catch (RedisException e) {
            throw unavailable(script.name(), e);
        }
    }

    static IdempotencyStore.UnavailableException unavailable(String operation, RedisException e) {
        return new IdempotencyStore.UnavailableException("Redis " + operation + ": " + RedisReplies.describe(e), e);
    }

    /** Closes the pool and the connection and stops Lettuce's threads; bounded by the shutdown cleanup timeout. */
    @Override
    public void close() {
        if (replicated != null) {
            replicated.close();
        }
        shared.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        try {
            resources.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOGGER.log(Level.WARNING, "Lettuce threads did not stop: {0}", RedisReplies.describe(e));
        }
    }
}
