package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.testing.RedisServer;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code idempotency.redis.min-replicas-ack}: claims and completions wait ({@code WAIT}) for replicas, against a real
 * primary with a real {@code --replicaof} replica, and without one.
 */
class RedisMinReplicasAckTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Identity REQUEST = IdempotencyStoreContract.identity("c");
    private static final Decision DECISION = IdempotencyStoreContract.decision(REQUEST, "{}");

    private final String key = RequestIdentities.lookupKey("authorize", "m_123",
                                                           new IdempotencyKey(UUID.randomUUID().toString()));

    @Test
    void withAReplicaClaimAndCompletionAreConfirmedAndTheRecordIsOnTheReplica() throws Exception {
        try (RedisServer primary = RedisServer.start();
                RedisServer replica = primary.startReplica();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(primary.uri(), 1));
                RedisConnection onReplica = RedisConnection.create(RedisIdempotencyStoreTest.settings(replica.uri(),
                                                                                                      0))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(REQUEST), LONG, Quota.UNLIMITED);
            assertThat(store.recordAndComplete(key, REQUEST, claim.token(), DECISION, LONG).completed(), is(true));

            byte[] state = onReplica.call("read replica", commands -> commands.hget(
                    "payments-authorization-test:idempotency:" + key, "state"));
            assertThat(new String(state, StandardCharsets.UTF_8), is("completed"));
            byte[] decision = onReplica.call("read replica", commands -> commands.get(
                    "payments-authorization-test:authorization:" + REQUEST.decision().id()));
            assertThat(decision, is(DECISION.body()));
        }
    }

    @Test
    void withoutTheReplicaAClaimIsRefusedWithinTwiceTheCommandTimeoutAndTheKeyIsGivenBack() throws Exception {
        try (RedisServer primary = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(primary.uri(), 1))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            long start = System.nanoTime();
            IdempotencyStore.UnavailableException e = assertThrows(IdempotencyStore.UnavailableException.class,
                    () -> store.claim(key, List.of(REQUEST), LONG, Quota.UNLIMITED));
            assertThat(Duration.ofNanos(System.nanoTime() - start), lessThan(Duration.ofMillis(1300)));
            assertThat(e.getMessage(), containsString("not confirmed by 1 Redis replica"));

            try (RedisConnection unreplicated = RedisConnection.create(RedisIdempotencyStoreTest.settings(
                    primary.uri(), 0))) {
                assertThat(RedisIdempotencyStore.create(unreplicated).claim(key, List.of(REQUEST), LONG, Quota.UNLIMITED),
                           instanceOf(Claim.Acquired.class));
            }
        }
    }

    @Test
    void aDecisionTheReplicaDidNotConfirmIsReportedButStaysOnThePrimary() throws Exception {
        try (RedisServer primary = RedisServer.start();
                RedisServer replica = primary.startReplica();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(primary.uri(), 1))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            Claim.Acquired claim = (Claim.Acquired) store.claim(key, List.of(REQUEST), LONG, Quota.UNLIMITED);
            replica.pause();
            try {
                assertThrows(IdempotencyStore.UnavailableException.class,
                             () -> store.recordAndComplete(key, REQUEST, claim.token(), DECISION, LONG));
            } finally {
                replica.resume();
            }
            assertThat(store.claim(key, List.of(REQUEST), LONG, Quota.UNLIMITED), is(new Claim.Replay(DECISION, false)));
        }
    }

    @Test
    void twoHundredConcurrentReplicatedClaimsAllSucceedOnSixteenConnections() throws Exception {
        // About sharing 16 connections, not about speed: a cold test JVM on two cores gets a generous timeout.
        Duration generous = Duration.ofSeconds(3);
        try (RedisServer primary = RedisServer.start();
                RedisServer replica = primary.startReplica();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(primary.uri(), 1,
                                                                                                  generous))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            List<Future<Claim>> claims = new ArrayList<>();
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 200; i++) {
                    String own = key + ":" + i;
                    claims.add(threads.submit(() -> store.claim(own, List.of(REQUEST), LONG, Quota.UNLIMITED)));
                }
            }
            for (Future<Claim> claim : claims) {
                assertThat(claim.get(), instanceOf(Claim.Acquired.class));
            }
        }
    }
}
