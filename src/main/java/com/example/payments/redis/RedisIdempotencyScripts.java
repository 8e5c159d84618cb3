package com.example.payments.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.lettuce.core.ScriptOutputType;

/**
 * The Lua scripts of {@link RedisIdempotencyStore}, each run atomically by Redis: claim-or-recover, lease renewal,
 * record-and-complete and release. What this holds is their source, the order of their {@code KEYS} and {@code ARGV}
 * (in the comment above each), how their arguments and replies are encoded (UTF-8 text, durations in ms, identities
 * numbered from 1), and which of their replies wrote something (for the replica acknowledgement of
 * {@link RedisConnection#evalReplicated}); the store builds the keys and maps the replies to its results.
 */
final class RedisIdempotencyScripts {

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
    static final LuaScript CLAIM = LuaScript.of("claim", NOW_MS + """
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
    static final LuaScript RENEW = LuaScript.of("renew", NOW_MS + """
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
    static final LuaScript RECORD = LuaScript.of("record", NOW_MS + """
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
    static final LuaScript RELEASE = LuaScript.of("release", """
            local r = redis.call('HMGET', KEYS[1], 'state', 'token')
            if r[1] == 'in_flight' and r[2] == ARGV[1] then
              redis.call('ZREM', KEYS[2], KEYS[1])
              redis.call('ZREM', KEYS[3], KEYS[1])
              return redis.call('DEL', KEYS[1])
            end
            return 0
            """, ScriptOutputType.INTEGER);

    /** Every script, preloaded with {@code SCRIPT LOAD} when the store is created. */
    static final List<LuaScript> ALL = List.of(CLAIM, RENEW, RECORD, RELEASE);

    private RedisIdempotencyScripts() {
    }

    /**
     * Whether a {@link #CLAIM} reply wrote to Redis: it took the key ({@code acquired}) or completed it from a
     * recorded decision ({@code recovered}).
     *
     * @param reply the script's reply, a list whose first element is the outcome
     * @return {@code true} when replicas must confirm it
     */
    static boolean claimWrote(Object reply) {
        String outcome = text(((List<?>) reply).get(0));
        return outcome.equals("acquired") || outcome.equals("recovered");
    }

    /**
     * Whether a {@link #RECORD} reply wrote to Redis: the decision was inserted or the key completed.
     *
     * @param reply the script's reply, {@code {inserted, completed, winner}}
     * @return {@code true} when replicas must confirm it
     */
    static boolean recordWrote(Object reply) {
        List<?> values = (List<?>) reply;
        return (Long) values.get(0) == 1L || (Long) values.get(1) == 1L;
    }

    /**
     * A script's identity number as an index into the request's identities.
     *
     * @param oneBased the number in a reply, 1 for the first identity (Lua counts from 1)
     * @return 0 for the first identity
     */
    static int identity(Object oneBased) {
        return (int) ((Long) oneBased - 1);
    }

    /**
     * A script argument.
     *
     * @param value text
     * @return its UTF-8 bytes
     */
    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A duration as a script argument.
     *
     * @param duration a lease or a retention
     * @return its milliseconds in decimal, at least 1 (a TTL of 0 would delete the key)
     */
    static byte[] millis(Duration duration) {
        return bytes(String.valueOf(Math.max(1, duration.toMillis())));
    }

    /**
     * A text element of a script's reply.
     *
     * @param value bulk-string bytes, or {@code null}
     * @return the UTF-8 text; empty for {@code null}
     */
    static String text(Object value) {
        return value == null ? "" : new String((byte[]) value, StandardCharsets.UTF_8);
    }
}
