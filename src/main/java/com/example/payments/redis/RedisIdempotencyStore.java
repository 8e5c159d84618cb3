package com.example.payments.redis;

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

import io.lettuce.core.SetArgs;

import static com.example.payments.redis.RedisIdempotencyScripts.CLAIM;
import static com.example.payments.redis.RedisIdempotencyScripts.RECORD;
import static com.example.payments.redis.RedisIdempotencyScripts.RELEASE;
import static com.example.payments.redis.RedisIdempotencyScripts.RENEW;
import static com.example.payments.redis.RedisIdempotencyScripts.bytes;
import static com.example.payments.redis.RedisIdempotencyScripts.identity;
import static com.example.payments.redis.RedisIdempotencyScripts.millis;
import static com.example.payments.redis.RedisIdempotencyScripts.text;

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
 * alone with {@code SET NX GET} and the key is left for the next claim to recover. With
 * {@code idempotency.redis.min-replicas-ack} above 0, a claim and a recording wait for that many replicas; a claim
 * they do not confirm is released again and refused ({@link UnavailableException}).
 *
 * <p>This class builds each operation's keys, runs its script ({@link RedisIdempotencyScripts}, where the scripts and
 * their argument encoding live) and maps the reply to the store's result.
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

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
        redis.preload(RedisIdempotencyScripts.ALL);
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
        ReplicatedWrites.Result result = redis.evalReplicated(CLAIM, RedisIdempotencyScripts::claimWrote, keys, args);
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
            result = redis.evalReplicated(RECORD, RedisIdempotencyScripts::recordWrote, keys,
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
}
