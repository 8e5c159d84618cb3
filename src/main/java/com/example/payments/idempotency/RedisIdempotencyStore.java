package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.lettuce.core.ScriptOutputType;

/**
 * {@link IdempotencyStore} in Redis, shared by every replica: a retry that lands on another replica sees the record
 * its first attempt wrote. Each record is one hash under {@code <key-prefix>idempotency:<merchant>:<key>} with the
 * fields {@code fingerprint} (HMAC hex), {@code owner}, {@code state} ({@code in_flight} or {@code completed}) and,
 * once completed, {@code status}, {@code location}, {@code content-type} and {@code body} (the response, which holds
 * brand and last four digits only). No PAN and no CVC ever reach Redis.
 *
 * <p>Every operation is one Lua script, so each check-and-write is atomic on the server. Expiry is Redis's own TTL:
 * the lease while IN_FLIGHT, the retention once completed; no sweeper runs. With
 * {@code idempotency.redis.min-replicas-ack} above 0, a new claim and a completion wait for that many replicas; an
 * unconfirmed claim is released again and refused ({@link UnavailableException}, so the authorizer does not run).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

    private static final String IN_FLIGHT = "in_flight";

    private static final LuaScript CLAIM = LuaScript.of("claim", """
            local r = redis.call('HMGET', KEYS[1], 'fingerprint', 'owner', 'state', 'status', 'location',
                                 'content-type', 'body')
            if not r[1] then
              redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'owner', ARGV[2], 'state', 'in_flight')
              redis.call('PEXPIRE', KEYS[1], ARGV[3])
              return {'acquired'}
            end
            if r[1] ~= ARGV[1] then return {'mismatch'} end
            if r[3] == 'completed' then return {'replay', r[4], r[5], r[6], r[7]} end
            -- The same claim arriving twice (owner tokens are unique per request) is still its owner's.
            if r[2] == ARGV[2] then return {'acquired'} end
            return {'in_flight'}
            """, ScriptOutputType.MULTI);

    private static final LuaScript RENEW = LuaScript.of("renew", """
            local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
            if r[1] == ARGV[1] and r[2] == 'in_flight' then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
            return 0
            """, ScriptOutputType.INTEGER);

    private static final LuaScript COMPLETE = LuaScript.of("complete", """
            local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
            if r[1] ~= ARGV[1] or r[2] ~= 'in_flight' then return 0 end
            redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[3], 'location', ARGV[4],
                       'content-type', ARGV[5], 'body', ARGV[6])
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return 1
            """, ScriptOutputType.INTEGER);

    private static final LuaScript RELEASE = LuaScript.of("release", """
            local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
            if r[1] == ARGV[1] and r[2] == 'in_flight' then return redis.call('DEL', KEYS[1]) end
            return 0
            """, ScriptOutputType.INTEGER);

    private final RedisConnection redis;
    private final String prefix;

    private RedisIdempotencyStore(RedisConnection redis) {
        this.redis = redis;
        this.prefix = redis.keyPrefix() + "idempotency:";
    }

    /**
     * Creates the store.
     *
     * @param redis the shared client (closed by its owner, not by this store); its
     *              {@code idempotency.redis.min-replicas-ack} says how many replicas confirm claims and completions
     * @return the store
     */
    public static RedisIdempotencyStore create(RedisConnection redis) {
        redis.preload(List.of(CLAIM, RENEW, COMPLETE, RELEASE));
        return new RedisIdempotencyStore(redis);
    }

    @Override
    public Claim claim(String lookupKey, String fingerprint, String owner, Duration lease) {
        ReplicatedWrites.Result result = redis.evalReplicated(CLAIM, RedisIdempotencyStore::acquired, key(lookupKey),
                                                              bytes(fingerprint), bytes(owner), millis(lease));
        if (!result.confirmed()) {
            // Not on enough replicas: a failover could lose the claim and let a retry authorize again. Give the key
            // back and refuse, before the authorizer runs.
            releaseQuietly(lookupKey, owner);
            throw new UnavailableException("claim not confirmed by " + redis.minReplicasAck() + " Redis "
                                           + "replica(s) within the command timeout (" + result.replicas()
                                           + " confirmed)", null);
        }
        List<?> reply = (List<?>) result.reply();
        return switch (text(reply.get(0))) {
            case "acquired" -> new Claim.Acquired(lookupKey, owner);
            case "mismatch" -> new Claim.Mismatch();
            case IN_FLIGHT -> new Claim.InFlight();
            case "replay" -> new Claim.Replay(new StoredResponse(Integer.parseInt(text(reply.get(1))),
                    emptyToNull(text(reply.get(2))), text(reply.get(3)), (byte[]) reply.get(4)));
            default -> throw new IllegalStateException("Unexpected claim reply " + text(reply.get(0)));
        };
    }

    @Override
    public boolean renew(String lookupKey, String owner, Duration lease) {
        return ((Long) redis.eval(RENEW, key(lookupKey), bytes(owner), millis(lease))) == 1L;
    }

    /**
     * {@inheritDoc}
     *
     * @throws UnavailableException also when {@code min-replicas-ack} replicas did not confirm the completion in time;
     *                              the response is then stored on the primary only (a failover before it replicates
     *                              would lose it)
     */
    @Override
    public boolean complete(String lookupKey, String owner, StoredResponse response, Duration retention) {
        ReplicatedWrites.Result result = redis.evalReplicated(COMPLETE, reply -> (Long) reply == 1L, key(lookupKey),
                bytes(owner), millis(retention), bytes(String.valueOf(response.status())),
                bytes(response.location() == null ? "" : response.location()), bytes(response.contentType()),
                response.body());
        if (!result.confirmed()) {
            throw new UnavailableException("completion not confirmed by " + redis.minReplicasAck() + " Redis "
                                           + "replica(s) within the command timeout (" + result.replicas()
                                           + " confirmed); it is on the primary only, and a failover before it "
                                           + "replicates would lose it", null);
        }
        return (Long) result.reply() == 1L;
    }

    @Override
    public boolean release(String lookupKey, String owner) {
        return ((Long) redis.eval(RELEASE, key(lookupKey), bytes(owner))) == 1L;
    }

    private void releaseQuietly(String lookupKey, String owner) {
        try {
            release(lookupKey, owner);
        } catch (UnavailableException e) {
            // The lease expires it.
        }
    }

    private String key(String lookupKey) {
        return prefix + lookupKey;
    }

    private static boolean acquired(Object reply) {
        return "acquired".equals(text(((List<?>) reply).get(0)));
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] millis(Duration duration) {
        return bytes(String.valueOf(Math.max(1, duration.toMillis())));
    }

    private static String text(Object value) {
        return value == null ? "" : new String((byte[]) value, StandardCharsets.UTF_8);
    }

    private static String emptyToNull(String value) {
        return value.isEmpty() ? null : value;
    }
}
