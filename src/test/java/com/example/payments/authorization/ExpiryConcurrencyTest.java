package com.example.payments.authorization;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.database.Database;
import com.example.payments.database.DatabaseSettings;
import com.example.payments.database.PostgresAuthorizationStore;
import com.example.payments.testing.PostgresServer;

import io.helidon.metrics.api.MeterRegistry;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * Two expiry workers (two replicas) on one store, in memory and in PostgreSQL: a backlog of several batches is fully
 * expired, every authorization's void reaches the acquirer exactly once (the workers claim disjoint batches), and a
 * void whose outcome stayed unknown is sent again, with the same attempt id, by the other worker once the claim
 * lapses; a capture a client left pending is sent again, then the remainder expires.
 */
class ExpiryConcurrencyTest {

    private static final Instant EXPIRES = Instant.parse("2026-12-01T12:00:00Z");
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final int BACKLOG = 250;
    private static final Expiry.Settings SETTINGS = new Expiry.Settings(40, 4, LEASE);

    @Test
    void twoWorkersInMemoryExpireTheWholeBacklogWithOneVoidEach() throws Exception {
        twoWorkersExpireTheWholeBacklogWithOneVoidEach(InMemoryAuthorizationStore.create(10_000));
    }

    @Test
    void twoReplicasOnPostgresExpireTheWholeBacklogWithOneVoidEach() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start(); Database database = open(server)) {
            twoWorkersExpireTheWholeBacklogWithOneVoidEach(PostgresAuthorizationStore.create(database));
        }
    }

    @Test
    void aVoidLeftUnknownInMemoryIsRetriedWithTheSameAttemptIdOnceItsClaimLapses() throws Exception {
        anUnknownVoidIsRetriedOnceItsClaimLapses(InMemoryAuthorizationStore.create(10));
    }

    @Test
    void aVoidLeftUnknownOnPostgresIsRetriedWithTheSameAttemptIdOnceItsClaimLapses() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start(); Database database = open(server)) {
            anUnknownVoidIsRetriedOnceItsClaimLapses(PostgresAuthorizationStore.create(database));
        }
    }

    @Test
    void aCaptureLeftPendingInMemoryIsSentAgainThenTheRemainderExpires() throws Exception {
        aCaptureLeftPendingIsSentAgainThenTheRemainderExpires(InMemoryAuthorizationStore.create(10));
    }

    @Test
    void aCaptureLeftPendingOnPostgresIsSentAgainThenTheRemainderExpires() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start(); Database database = open(server)) {
            aCaptureLeftPendingIsSentAgainThenTheRemainderExpires(PostgresAuthorizationStore.create(database));
        }
    }

    // A client's capture answered 504 and never retried: its reservation held the authorization, which never expired.
    private static void aCaptureLeftPendingIsSentAgainThenTheRemainderExpires(AuthorizationStore store)
            throws Exception {
        String id = store.create(authorization()).id();
        String captureId = UUID.randomUUID().toString();
        Instant reservedAt = EXPIRES.minusSeconds(30);
        assertThat(store.reserve(id, new OperationRecord(captureId, OperationRecord.CAPTURE, id, "att_capture_1",
                "m_123", new Amount(300, "EUR"), "PENDING", null, reservedAt), 10, reservedAt),
                   instanceOf(AuthorizationStore.Reserved.class));
        assertThat(store.pendingOperations(id).stream().map(OperationRecord::id).toList(), is(List.of(captureId)));
        CountingAcquirer acquirer = new CountingAcquirer(Duration.ZERO);
        Clock clock = Clock.fixed(EXPIRES.plusSeconds(60), ZoneOffset.UTC);
        try (BoundedAuthorizer bounded = new BoundedAuthorizer(acquirer, Duration.ofSeconds(2),
                                                               MeterRegistry.create())) {
            Expiry.create(store, bounded, clock, SETTINGS, () -> { }).run();
        }
        assertThat("the capture sent again with its own attempt id", acquirer.calls.get("att_capture_1").get(), is(1));
        assertThat(store.findOperation(captureId).orElseThrow().status(), is("SUCCEEDED"));
        assertThat(store.pendingOperations(id), is(List.of()));
        AuthorizationRecord expired = store.find(id).orElseThrow();
        assertThat(expired.state(), is(AuthorizationState.EXPIRED));
        assertThat(expired.capturedAmount(), is(300L));
        assertThat("then the remainder voided", acquirer.total.get(), is(2));
    }

    private static void twoWorkersExpireTheWholeBacklogWithOneVoidEach(AuthorizationStore store) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < BACKLOG; i++) {
            ids.add(store.create(authorization()).id());
        }
        CountingAcquirer acquirer = new CountingAcquirer(Duration.ofMillis(5));
        Clock clock = Clock.fixed(EXPIRES.plusSeconds(60), ZoneOffset.UTC);
        AtomicInteger beats = new AtomicInteger();
        MeterRegistry meters = MeterRegistry.create();
        try (BoundedAuthorizer one = new BoundedAuthorizer(acquirer, Duration.ofSeconds(2), meters);
             BoundedAuthorizer two = new BoundedAuthorizer(acquirer, Duration.ofSeconds(2), meters)) {
            Expiry first = Expiry.create(store, one, clock, SETTINGS, beats::incrementAndGet);
            Expiry second = Expiry.create(store, two, clock, SETTINGS, beats::incrementAndGet);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!allExpired(store, ids) && System.nanoTime() < deadline) {
                Thread a = Thread.ofPlatform().start(first);
                Thread b = Thread.ofPlatform().start(second);
                a.join();
                b.join();
            }
        }
        assertThat(ids.stream().map(id -> store.find(id).orElseThrow().state()).toList(),
                   everyItem(is(AuthorizationState.EXPIRED)));
        assertThat("one void per authorization", acquirer.calls.size(), is(BACKLOG));
        assertThat("no void sent twice", acquirer.calls.values().stream().map(AtomicInteger::get).toList(),
                   everyItem(is(1)));
        assertThat("a beat per authorization", beats.get(), greaterThanOrEqualTo(BACKLOG));
    }

    private static void anUnknownVoidIsRetriedOnceItsClaimLapses(AuthorizationStore store) throws Exception {
        String id = store.create(authorization()).id();
        CountingAcquirer acquirer = new CountingAcquirer(Duration.ZERO);
        acquirer.failNext.set(true);
        AtomicReference<Instant> now = new AtomicReference<>(EXPIRES.plusSeconds(60));
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        MeterRegistry meters = MeterRegistry.create();
        try (BoundedAuthorizer one = new BoundedAuthorizer(acquirer, Duration.ofSeconds(2), meters);
             BoundedAuthorizer two = new BoundedAuthorizer(acquirer, Duration.ofSeconds(2), meters)) {
            Expiry first = Expiry.create(store, one, clock, SETTINGS, () -> { });
            Expiry second = Expiry.create(store, two, clock, SETTINGS, () -> { });
            first.run();
            assertThat("the first void's outcome is unknown", store.find(id).orElseThrow().state(),
                       is(AuthorizationState.APPROVED));
            second.run();
            assertThat("claimed by the first worker: the second leaves it", acquirer.total.get(), is(1));
            now.set(now.get().plus(LEASE));
            second.run();
        }
        assertThat(store.find(id).orElseThrow().state(), is(AuthorizationState.EXPIRED));
        assertThat("sent twice, with one attempt id", acquirer.total.get(), is(2));
        assertThat(acquirer.calls.size(), is(1));
    }

    private static boolean allExpired(AuthorizationStore store, List<String> ids) {
        return ids.stream().allMatch(id -> store.find(id).orElseThrow().state() == AuthorizationState.EXPIRED);
    }

    private static AuthorizationRecord authorization() {
        String id = UUID.randomUUID().toString();
        Instant created = EXPIRES.minus(Duration.ofDays(7));
        return new AuthorizationRecord(id, "att_" + id, "m_123", null, new Amount(1299, "EUR"),
                new Authorization.CardSummary("visa", "1111"), "APPROVED", null, created,
                AuthorizationState.APPROVED, 0, 0, false, List.of(), EXPIRES, created);
    }

    private static Database open(PostgresServer server) {
        DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                Optional.empty(), 10, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                Optional.empty());
        return Database.open(settings, MeterRegistry.create());
    }

    /** Approves every void after a latency, counting the calls per attempt id; fails the next one when asked. */
    private static final class CountingAcquirer implements Authorizer {

        private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        private final AtomicInteger total = new AtomicInteger();
        private final AtomicBoolean failNext = new AtomicBoolean();
        private final Duration latency;

        CountingAcquirer(Duration latency) {
            this.latency = latency;
        }

        @Override
        public Decision authorize(AuthorizationAttempt attempt) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Decision capture(AcquirerOperation operation) {
            calls.computeIfAbsent(operation.attemptId(), k -> new AtomicInteger()).incrementAndGet();
            total.incrementAndGet();
            return Decision.approve(Instant.now());
        }

        @Override
        public Decision voidRemainder(AcquirerOperation operation) throws IssuerUnavailableException,
                                                                          InterruptedException {
            calls.computeIfAbsent(operation.attemptId(), k -> new AtomicInteger()).incrementAndGet();
            total.incrementAndGet();
            Thread.sleep(latency);
            if (failNext.getAndSet(false)) {
                throw new IssuerUnavailableException("connection reset");
            }
            return Decision.approve(Instant.now());
        }
    }
}
