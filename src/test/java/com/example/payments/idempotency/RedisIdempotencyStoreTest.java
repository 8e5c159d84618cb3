package com.example.payments.idempotency;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.redis.RedisSettings;
import com.example.payments.testing.RedisServer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * The store contract, unchanged, against {@link RedisIdempotencyStore} on a private {@code redis-server}, plus what
 * only Redis has: its key layout and TTLs, and a decision still recorded when the record-and-complete script is
 * refused.
 */
class RedisIdempotencyStoreTest extends IdempotencyStoreContract {

    static final String PREFIX = "payments-authorization-test:";
    private static RedisServer server;
    private static RedisConnection connection;
    private static RedisIdempotencyStore store;

    @BeforeAll
    static void startRedis() throws IOException {
        if (RedisServer.installed()) {
            server = RedisServer.start();
            connection = RedisConnection.create(settings(server.uri(), 0));
            store = RedisIdempotencyStore.create(connection);
        }
    }

    @BeforeEach
    void requireRedis() {
        RedisServer.assumeInstalled();
    }

    @AfterAll
    static void stopRedis() {
        if (connection != null) {
            connection.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Override
    IdempotencyStore store() {
        return store;
    }

    @Test
    void theDecisionIsKeptUnderItsKindAndIdForTheRetentionAndTheCompletedKeyNoLonger() {
        String key = RequestIdentities.lookupKey("authorize", "m_123", new IdempotencyKey(UUID.randomUUID().toString()));
        Identity identity = identity("1");
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LONG, Quota.UNLIMITED);
        store.recordAndComplete(key, identity, claim.token(), decision(identity, "ttl"), Duration.ofHours(24));

        long decisionTtl = connection.call("pttl", c -> c.pttl(PREFIX + "authorization:" + identity.decision().id()));
        long keyTtl = connection.call("pttl", c -> c.pttl(PREFIX + "idempotency:" + key));
        assertThat(decisionTtl, allOf(greaterThan(Duration.ofHours(23).toMillis()),
                                      lessThanOrEqualTo(Duration.ofHours(24).toMillis())));
        assertThat(keyTtl, lessThanOrEqualTo(decisionTtl));
        byte[] state = connection.call("state", c -> c.hget(PREFIX + "idempotency:" + key, "state"));
        assertThat(new String(state, StandardCharsets.UTF_8), is("completed"));
    }

    @Test
    void theQuotaSetsFollowARecordFromItsClaimToItsCompletionAndExpireWithIt() {
        String merchant = "m_" + UUID.randomUUID();
        String key = RequestIdentities.lookupKey("authorize", merchant, new IdempotencyKey("k"));
        String inFlight = PREFIX + "quota:in-flight:" + merchant;
        String records = PREFIX + "quota:records:" + merchant;
        Identity identity = identity("3");
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LONG, new Quota(5, 5));
        assertThat(connection.call("zcard", c -> c.zcard(inFlight)), is(1L));
        assertThat(connection.call("zcard", c -> c.zcard(records)), is(1L));

        store.recordAndComplete(key, identity, claim.token(), decision(identity, "quota"), Duration.ofHours(24));
        assertThat(connection.call("zcard", c -> c.zcard(inFlight)), is(0L));
        assertThat(connection.call("zcard", c -> c.zcard(records)), is(1L));
        long setTtl = connection.call("pttl", c -> c.pttl(records));
        assertThat(setTtl, allOf(greaterThan(Duration.ofHours(23).toMillis()),
                                 lessThanOrEqualTo(Duration.ofHours(24).toMillis())));
    }

    @Test
    void whenTheScriptIsRefusedTheDecisionIsStillRecordedAndTheNextClaimRecoversIt() {
        String key = RequestIdentities.lookupKey("authorize", "m_123", new IdempotencyKey(UUID.randomUUID().toString()));
        Identity identity = identity("2");
        Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(identity), LONG, Quota.UNLIMITED);
        Decision decision = decision(identity, "refused script");
        connection.call("acl", c -> c.aclSetuser("default", io.lettuce.core.AclSetuserArgs.Builder.removeCommand(
                io.lettuce.core.protocol.CommandType.EVALSHA)));
        Recorded recorded;
        try {
            recorded = store.recordAndComplete(key, identity, claim.token(), decision, LONG);
        } finally {
            connection.call("acl", c -> c.aclSetuser("default", io.lettuce.core.AclSetuserArgs.Builder.addCommand(
                    io.lettuce.core.protocol.CommandType.EVALSHA)));
        }
        assertThat(recorded, is(new Recorded(decision, true, false)));
        assertThat(store.claim(key, List.of(identity), LONG, Quota.UNLIMITED), is(new Claim.Replay(decision, true)));
    }

    static RedisSettings settings(String uri, int minReplicasAck) {
        return settings(uri, minReplicasAck, Duration.ofMillis(500));
    }

    static RedisSettings settings(String uri, int minReplicasAck, Duration commandTimeout) {
        return new RedisSettings(URI.create(uri), PREFIX, Duration.ofSeconds(1), commandTimeout,
                                                     minReplicasAck);
    }
}
