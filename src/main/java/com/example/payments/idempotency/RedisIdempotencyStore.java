package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;

/**
 * {@link IdempotencyStore} in Redis, shared by every replica: a retry that lands on another replica sees the record
 * its first attempt wrote. Two kinds of keys:
 * <ul>
 *     <li>{@code <key-prefix>idempotency:<lookup key>}: a hash with {@code fingerprint}, {@code state}
 *     ({@code in_flight} or {@code completed}) and {@code token}, the fencing token; its TTL is the lease while in
 *     flight (a lapsed lease is a deleted key), then the decision's remaining retention;</li>
 *     <li>{@code <key-prefix><kind>:<id>}, e.g. {@code payments-authorization:authorization:<id>}: the decision, the
 *     exact body every answer sends, written once ({@code SET NX}) and kept for {@code idempotency.retention}.</li>
 * </ul>
 * No PAN and no CVC ever reach Redis: the fingerprint is a keyed hash and the body holds brand and last four digits.
 *
 * <p>One new authorization costs two round trips, each one Lua script run atomically by Redis: claim-or-recover
 * (which reads the decision first) and record-and-complete (whose decision write commits even when the completion is
 * refused). Fencing tokens come from Redis's own clock ({@code TIME}, microseconds) or one more than the key's last
 * token, so they keep growing when Redis restarts empty. If the record-and-complete script itself is refused (an ACL,
 * a read-only replica), the decision is written alone with {@code SET NX GET} and the key is left for the next claim
 * to recover. With {@code idempotency.redis.min-replicas-ack} above 0, a claim and a recording wait for that many
 * replicas; a claim they do not confirm is released again and refused ({@link UnavailableException}).
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

    private static final LuaScript CLAIM = LuaScript.of("claim", """
            local n = #KEYS - 1
            local rec = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'token')
            local matched = nil
            if rec[1] then
              for i = 1, n do
                if rec[1] == ARGV[i + 1] then matched = i end
              end
              if not matched then return {'mismatch'} end
            end
            for i = 1, n do
              if not matched or i == matched then
                local body = redis.call('GET', KEYS[i + 1])
                if body then
                  if rec[2] == 'completed' then return {'replay', i, body} end
                  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[i + 1], 'state', 'completed',
                             'token', rec[3] or '0')
                  local ttl = redis.call('PTTL', KEYS[i + 1])
                  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
                  return {'recovered', i, body}
                end
              end
            end
            if rec[2] == 'in_flight' then return {'in_flight'} end
            local now = redis.call('TIME')
            local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
            local previous = tonumber(rec[3] or '0')
            if token <= previous then token = previous + 1 end
            local identity = matched or 1
            local text = string.format('%.0f', token)
            redis.call('HSET', KEYS[1], 'fingerprint', ARGV[identity + 1], 'state', 'in_flight', 'token', text)
            redis.call('PEXPIRE', KEYS[1], ARGV[1])
            return {'acquired', identity, text}
            """, ScriptOutputType.MULTI);

    private static final LuaScript RENEW = LuaScript.of("renew", """
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            if r[1] == 'in_flight' and r[2] == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
            return 0
            """, ScriptOutputType.INTEGER);

    private static final LuaScript RECORD = LuaScript.of("record", """
            local inserted = 1
            local winner = ARGV[3]
            if not redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then
              inserted = 0
              winner = redis.call('GET', KEYS[2]) or ARGV[3]
            end
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            local completed = 0
            if not r[1] or (r[1] == 'in_flight' and r[2] == ARGV[1]) then
              redis.call('HSET', KEYS[1], 'fingerprint', ARGV[2], 'state', 'completed', 'token', ARGV[1])
              local ttl = redis.call('PTTL', KEYS[2])
              if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
              completed = 1
            end
            return {inserted, completed, winner}
            """, ScriptOutputType.MULTI);

    private static final LuaScript RELEASE = LuaScript.of("release", """
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            if r[1] == 'in_flight' and r[2] == ARGV[1] then return redis.call('DEL', KEYS[1]) end
            return 0
            """, ScriptOutputType.INTEGER);

    private final RedisConnection redis;
    private final String prefix;

    private RedisIdempotencyStore(RedisConnection redis) {
        this.redis = redis;
        this.prefix = redis.keyPrefix();
    }

    /**
     * Creates the store.
     *
     * @param redis the shared client (closed by its owner, not by this store); its
     *              {@code idempotency.redis.min-replicas-ack} says how many replicas confirm claims and recordings
     * @return the store
     */
    public static RedisIdempotencyStore create(RedisConnection redis) {
        redis.preload(List.of(CLAIM, RENEW, RECORD, RELEASE));
        return new RedisIdempotencyStore(redis);
    }

    @Override
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease) {
        String[] keys = new String[identities.size() + 1];
        byte[][] args = new byte[identities.size() + 1][];
        keys[0] = recordKey(lookupKey);
        args[0] = millis(lease);
        for (int i = 0; i < identities.size(); i++) {
            keys[i + 1] = decisionKey(identities.get(i).decision());
            args[i + 1] = bytes(identities.get(i).fingerprint());
        }
        ReplicatedWrites.Result result = redis.evalReplicated(CLAIM, RedisIdempotencyStore::claimWrote, keys, args);
        List<?> reply = (List<?>) result.reply();
        String outcome = text(reply.get(0));
        if (!result.confirmed() && outcome.equals("acquired")) {
            // Not on enough replicas: a failover could lose the claim and let a retry authorize again. Give the key
            // back and refuse, before the authorizer runs.
            releaseQuietly(lookupKey, Long.parseLong(text(reply.get(2))));
            throw new UnavailableException("claim not confirmed by " + redis.minReplicasAck() + " Redis "
                                           + "replica(s) within the command timeout (" + result.replicas()
                                           + " confirmed)", null);
        }
        return switch (outcome) {
            case "acquired" -> new Claim.Acquired(lookupKey, Long.parseLong(text(reply.get(2))),
                                                  identity(reply.get(1)));
            case "mismatch" -> new Claim.Mismatch();
            case "in_flight" -> new Claim.InFlight();
            case "replay", "recovered" -> new Claim.Replay(
                    new Decision(identities.get(identity(reply.get(1))).decision(), (byte[]) reply.get(2)),
                    outcome.equals("recovered"));
            default -> throw new IllegalStateException("Unexpected claim reply " + outcome);
        };
    }

    @Override
    public boolean renew(String lookupKey, long token, Duration lease) {
        return ((Long) redis.eval(RENEW, new String[] {recordKey(lookupKey)}, bytes(Long.toString(token)),
                                  millis(lease))) == 1L;
    }

    /**
     * {@inheritDoc}
     *
     * @throws UnavailableException also when {@code min-replicas-ack} replicas did not confirm the recording in time;
     *                              it is then on the primary only (a failover before it replicates would lose it)
     */
    @Override
    public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                      Duration retention) {
        String[] keys = {recordKey(lookupKey), decisionKey(decision.key())};
        ReplicatedWrites.Result result;
        try {
            result = redis.evalReplicated(RECORD, RedisIdempotencyStore::recordWrote, keys,
                                          bytes(Long.toString(token)), bytes(identity.fingerprint()), decision.body(),
                                          millis(retention));
        } catch (UnavailableException e) {
            return recordAlone(decision, retention, e);
        }
        if (!result.confirmed()) {
            throw new UnavailableException("decision not confirmed by " + redis.minReplicasAck() + " Redis "
                                           + "replica(s) within the command timeout (" + result.replicas()
                                           + " confirmed); it is on the primary only, and a failover before it "
                                           + "replicates would lose it", null);
        }
        List<?> reply = (List<?>) result.reply();
        return new Recorded(new Decision(decision.key(), (byte[]) reply.get(2)), (Long) reply.get(0) == 1L,
                            (Long) reply.get(1) == 1L);
    }

    // The script was refused or failed: the decision must still be recorded. A plain SET NX GET, outside any script,
    // is the one write that ACLs and script failures leave possible; the key stays for the next claim to recover.
    private Recorded recordAlone(Decision decision, Duration retention, UnavailableException scriptFailure) {
        byte[] previous;
        try {
            previous = redis.call("record decision", commands -> commands.setGet(decisionKey(decision.key()),
                    decision.body(), SetArgs.Builder.nx().px(Math.max(1, retention.toMillis()))));
        } catch (UnavailableException e) {
            e.addSuppressed(scriptFailure);
            throw e;
        }
        if (redis.minReplicasAck() > 0) {
            throw new UnavailableException("decision recorded without its completion and not confirmed by a "
                                           + "replica: " + scriptFailure.getMessage(), scriptFailure);
        }
        return new Recorded(previous == null ? decision : new Decision(decision.key(), previous), previous == null,
                            false);
    }

    @Override
    public boolean release(String lookupKey, long token) {
        return ((Long) redis.eval(RELEASE, new String[] {recordKey(lookupKey)},
                                  bytes(Long.toString(token)))) == 1L;
    }

    @Override
    public Optional<Decision> findDecision(DecisionKey key) {
        byte[] body = redis.call("read " + key.kind(), commands -> commands.get(decisionKey(key)));
        return body == null ? Optional.empty() : Optional.of(new Decision(key, body));
    }

    private void releaseQuietly(String lookupKey, long token) {
        try {
            release(lookupKey, token);
        } catch (UnavailableException e) {
            // The lease expires it.
        }
    }

    private String recordKey(String lookupKey) {
        return prefix + "idempotency:" + lookupKey;
    }

    private String decisionKey(DecisionKey key) {
        return prefix + key.kind() + ":" + key.id();
    }

    private static boolean claimWrote(Object reply) {
        String outcome = text(((List<?>) reply).get(0));
        return outcome.equals("acquired") || outcome.equals("recovered");
    }

    private static boolean recordWrote(Object reply) {
        List<?> values = (List<?>) reply;
        return (Long) values.get(0) == 1L || (Long) values.get(1) == 1L;
    }

    private static int identity(Object oneBased) {
        return (int) ((Long) oneBased - 1);
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
}
