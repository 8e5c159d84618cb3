package com.example.payments.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.Recorded;
import com.example.payments.idempotency.RequestIdentities;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;

/**
 * {@link IdempotencyStore} in Redis, shared by every replica: a retry that lands on another replica sees the record
 * its first attempt wrote. Three kinds of keys:
 * <ul>
 *     <li>{@code <key-prefix>idempotency:<lookup key>}: a hash with {@code fingerprint}, {@code state}
 *     ({@code in_flight} or {@code completed}) and {@code token}, the fencing token; its TTL is the lease while in
 *     flight (a lapsed lease is a deleted key), then the decision's remaining retention;</li>
 *     <li>{@code <key-prefix><kind>:<id>}, e.g. {@code <key-prefix>authorization:<id>}: the decision, the
 *     exact body every answer sends, written once ({@code SET NX}) and kept for {@code idempotency.retention};</li>
 *     <li>{@code <key-prefix>quota:in-flight:<merchant>} and {@code <key-prefix>quota:records:<merchant>}: sorted
 *     sets of the merchant's record keys, scored by when each stops counting (lease end while in flight, retention end
 *     once completed); members past their score are pruned when a claim checks the {@link Quota}.</li>
 * </ul>
 *
 * <p>One new authorization costs two round trips, each one Lua script run atomically by Redis: claim-or-recover
 * (which reads the decision first, and checks the merchant's quota only when it would take the key) and
 * record-and-complete (whose decision write commits even when the completion is refused). Renewal, completion and
 * release keep the quota sets in the same script as the record. No PAN and no CVC ever reach Redis: the fingerprint
 * is a keyed hash and the body holds brand and last four digits. Fencing tokens come from Redis's own clock
 * ({@code TIME}, microseconds) or one more than the key's last token, so they keep growing when Redis restarts
 * empty. If the record-and-complete script itself is refused (an ACL, a read-only replica), the decision is written
 * alone with {@code SET NX GET} and the key is left for the next claim to recover. With {@code idempotency.redis.min-replicas-ack} above 0, a claim and a recording wait for that many
 * replicas; a claim they do not confirm is released again and refused ({@link UnavailableException}).
 *
 * <p>Size: each store operation is a script call plus the mapping of its reply, all on one connection.
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

    // Shared by the scripts: Redis's clock in ms, and a sorted set's TTL raised to cover a member's score.
    private static final String NOW_MS = """
            local function now_ms()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            end
            local function cover(key, ms)
              if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
            end
            """;

    // KEYS: record, decision per identity..., in-flight set, records set. ARGV: lease, fingerprint per identity...,
    // max in flight, max records.
    private static final LuaScript CLAIM = LuaScript.of("claim", NOW_MS + """
            local n = #KEYS - 3
            local inflight, records = KEYS[n + 2], KEYS[n + 3]
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
                  if ttl > 0 then
                    redis.call('PEXPIRE', KEYS[1], ttl)
                    redis.call('ZREM', inflight, KEYS[1])
                    redis.call('ZADD', records, now_ms() + ttl, KEYS[1])
                    cover(records, ttl)
                  end
                  return {'recovered', i, body}
                end
              end
            end
            if rec[2] == 'in_flight' then return {'in_flight'} end
            local now = now_ms()
            local lease = tonumber(ARGV[1])
            redis.call('ZREMRANGEBYSCORE', inflight, '-inf', now)
            redis.call('ZREMRANGEBYSCORE', records, '-inf', now)
            local adds_in_flight = redis.call('ZSCORE', inflight, KEYS[1]) and 0 or 1
            local adds_record = redis.call('ZSCORE', records, KEYS[1]) and 0 or 1
            if redis.call('ZCARD', inflight) + adds_in_flight > tonumber(ARGV[n + 2]) then
              return {'over_quota', 'in_flight'}
            end
            if redis.call('ZCARD', records) + adds_record > tonumber(ARGV[n + 3]) then
              return {'over_quota', 'records'}
            end
            local t = redis.call('TIME')
            local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local previous = tonumber(rec[3] or '0')
            if token <= previous then token = previous + 1 end
            local identity = matched or 1
            local text = string.format('%.0f', token)
            redis.call('HSET', KEYS[1], 'fingerprint', ARGV[identity + 1], 'state', 'in_flight', 'token', text)
            redis.call('PEXPIRE', KEYS[1], lease)
            redis.call('ZADD', inflight, now + lease, KEYS[1])
            redis.call('ZADD', records, now + lease, KEYS[1])
            cover(inflight, lease)
            cover(records, lease)
            return {'acquired', identity, text}
            """, ScriptOutputType.MULTI);

    // KEYS: record, in-flight set, records set. ARGV: token, lease.
    private static final LuaScript RENEW = LuaScript.of("renew", NOW_MS + """
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            if r[1] == 'in_flight' and r[2] == ARGV[1] then
              local lease = tonumber(ARGV[2])
              local until_ms = now_ms() + lease
              redis.call('ZADD', KEYS[2], 'XX', until_ms, KEYS[1])
              redis.call('ZADD', KEYS[3], 'XX', until_ms, KEYS[1])
              cover(KEYS[2], lease)
              cover(KEYS[3], lease)
              return redis.call('PEXPIRE', KEYS[1], lease)
            end
            return 0
            """, ScriptOutputType.INTEGER);

    // KEYS: record, decision, in-flight set, records set. ARGV: token, fingerprint, body, retention.
    private static final LuaScript RECORD = LuaScript.of("record", NOW_MS + """
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
              if ttl <= 0 then ttl = tonumber(ARGV[4]) end
              redis.call('PEXPIRE', KEYS[1], ttl)
              redis.call('ZREM', KEYS[3], KEYS[1])
              redis.call('ZADD', KEYS[4], now_ms() + ttl, KEYS[1])
              cover(KEYS[4], ttl)
              completed = 1
            end
            return {inserted, completed, winner}
            """, ScriptOutputType.MULTI);

    // KEYS: record, in-flight set, records set. ARGV: token.
    private static final LuaScript RELEASE = LuaScript.of("release", """
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            if r[1] == 'in_flight' and r[2] == ARGV[1] then
              redis.call('ZREM', KEYS[2], KEYS[1])
              redis.call('ZREM', KEYS[3], KEYS[1])
              return redis.call('DEL', KEYS[1])
            end
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
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota) {
        int n = identities.size();
        String[] keys = new String[n + 3];
        byte[][] args = new byte[n + 3][];
        keys[0] = recordKey(lookupKey);
        args[0] = millis(lease);
        for (int i = 0; i < n; i++) {
            keys[i + 1] = decisionKey(identities.get(i).decision());
            args[i + 1] = bytes(identities.get(i).fingerprint());
        }
        keys[n + 1] = inFlightSet(lookupKey);
        keys[n + 2] = recordsSet(lookupKey);
        args[n + 1] = bytes(Integer.toString(quota.maxInFlight()));
        args[n + 2] = bytes(Integer.toString(quota.maxRecords()));
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
            case "over_quota" -> new Claim.OverQuota(text(reply.get(1)).equals("in_flight") ? Quota.Limit.IN_FLIGHT
                    : Quota.Limit.RECORDS);
            case "replay", "recovered" -> new Claim.Replay(
                    new Decision(identities.get(identity(reply.get(1))).decision(), (byte[]) reply.get(2)),
                    outcome.equals("recovered"));
            default -> throw new IllegalStateException("Unexpected claim reply " + outcome);
        };
    }

    @Override
    public boolean renew(String lookupKey, long token, Duration lease) {
        return ((Long) redis.eval(RENEW, quotaKeys(lookupKey), bytes(Long.toString(token)), millis(lease))) == 1L;
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
        String[] keys = {recordKey(lookupKey), decisionKey(decision.key()), inFlightSet(lookupKey),
                         recordsSet(lookupKey)};
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
        return ((Long) redis.eval(RELEASE, quotaKeys(lookupKey), bytes(Long.toString(token)))) == 1L;
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

    private String[] quotaKeys(String lookupKey) {
        return new String[] {recordKey(lookupKey), inFlightSet(lookupKey), recordsSet(lookupKey)};
    }

    // The scope is the last part of the key, so any character in it is unambiguous.
    private String inFlightSet(String lookupKey) {
        return prefix + "quota:in-flight:" + RequestIdentities.scopeOf(lookupKey);
    }

    private String recordsSet(String lookupKey) {
        return prefix + "quota:records:" + RequestIdentities.scopeOf(lookupKey);
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
