package com.example.payments.authorization;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.InMemoryKeyBindings;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.idempotency.StoreFullException;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The in-memory resource store and key bindings: insert-if-absent, bounded, never evicting. */
class InMemoryAuthorizationStoreTest {

    private static AuthorizationRecord authorization(String id) {
        Instant created = Instant.parse("2026-12-01T12:00:00Z");
        return new AuthorizationRecord(id, "att_" + id, "m_123", null, new Amount(1299, "EUR"),
                new Authorization.CardSummary("visa", "1111"), "APPROVED", null, created,
                AuthorizationState.APPROVED, 0, 0, false, List.of(), created.plus(Duration.ofDays(7)), created);
    }

    @Test
    void theFirstWriteOfAnIdWinsAndIsReadBack() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(10);
        AuthorizationRecord first = authorization("a");
        AuthorizationRecord second = new AuthorizationRecord("a", "att_other", "m_123", null, new Amount(1, "EUR"),
                first.card(), "APPROVED", null, first.createdAt(), AuthorizationState.APPROVED, 0, 0, false, List.of(),
                first.expiresAt(), first.updatedAt());
        assertThat(store.create(first), is(first));
        assertThat(store.create(second), is(first));
        assertThat(store.find("a").orElseThrow(), is(first));
        assertThat(store.size(), is(1));
    }

    @Test
    void aFullStoreRefusesNewAuthorizationsAndKeepsTheOldOnes() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(1);
        store.create(authorization("a"));
        assertThrows(StoreFullException.class, () -> store.create(authorization("b")));
        assertThat(store.create(authorization("a")).id(), is("a"));
        assertThat(store.find("b").isPresent(), is(false));
    }

    private static OperationRecord pending(String id, String kind, String authorizationId, long amount) {
        return new OperationRecord(id, kind, authorizationId, "att_" + id, "m_123", new Amount(amount, "EUR"),
                                   "PENDING", null, Instant.parse("2026-12-01T12:00:01Z"));
    }

    @Test
    void capturesAndVoidsCountAgainstTheBoundAndAreRefusedBeyondItWithNothingWritten() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(3);
        store.create(authorization("a"));
        Instant now = Instant.parse("2026-12-01T12:00:01Z");
        assertThat(store.reserve("a", pending("c1", OperationRecord.CAPTURE, "a", 100), 50, now),
                   is(org.hamcrest.Matchers.instanceOf(AuthorizationStore.Reserved.class)));
        store.create(authorization("b"));
        assertThat(store.size(), is(3));
        assertThrows(StoreFullException.class,
                     () -> store.reserve("a", pending("c2", OperationRecord.CAPTURE, "a", 100), 50, now));
        assertThrows(StoreFullException.class,
                     () -> store.reserve("b", pending("v1", OperationRecord.VOID, "b", 0), 50, now));
        assertThat("nothing reserved", store.find("a").orElseThrow().reservedAmount(), is(100L));
        assertThat(store.find("b").orElseThrow().voidPending(), is(false));
        assertThat(store.findOperation("c2").isPresent(), is(false));
        assertThat(store.size(), is(3));
        // A retry of a reserved operation is no new resource: found, not refused.
        assertThat(store.reserve("a", pending("c1", OperationRecord.CAPTURE, "a", 100), 50, now),
                   is(org.hamcrest.Matchers.instanceOf(AuthorizationStore.Existing.class)));
    }

    @Test
    void theExpiryWorkersVoidIsNeverRefusedByAFullStore() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(1);
        AuthorizationRecord a = store.create(authorization("a"));
        Instant after = a.expiresAt().plusSeconds(1);
        assertThat(store.reserve("a", pending("e1", OperationRecord.EXPIRY, "a", 0), 50, after),
                   is(org.hamcrest.Matchers.instanceOf(AuthorizationStore.Reserved.class)));
        assertThat(store.size(), is(2));
    }

    private static AuthorizationRecord expiringAt(String id, Instant expiresAt, AuthorizationState state) {
        AuthorizationRecord a = authorization(id);
        return new AuthorizationRecord(id, a.attemptId(), a.merchantId(), null, a.amount(), a.card(), state.name(),
                null, a.createdAt(), state, 0, 0, false, List.of(), expiresAt, a.updatedAt());
    }

    private static List<String> ids(List<AuthorizationRecord> records) {
        return records.stream().map(AuthorizationRecord::id).toList();
    }

    @Test
    void theExpiryWorkerClaimsApprovedAuthorizationsPastTheirExpiryOldestFirstAndEachOnceWhileItsClaimHolds() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(100);
        Instant now = Instant.parse("2026-12-08T12:00:00Z");
        Duration lease = Duration.ofSeconds(30);
        store.create(expiringAt("later", now.plusSeconds(5), AuthorizationState.APPROVED));
        store.create(expiringAt("second", now.minusSeconds(20), AuthorizationState.APPROVED));
        store.create(expiringAt("declined", now.minusSeconds(40), AuthorizationState.DECLINED));
        store.create(expiringAt("first", now.minusSeconds(30), AuthorizationState.APPROVED));
        store.create(expiringAt("third", now.minusSeconds(10), AuthorizationState.APPROVED));
        store.create(expiringAt("exact", now, AuthorizationState.APPROVED));

        assertThat(ids(store.claimExpired(now, 2, lease)), is(List.of("first", "second")));
        assertThat("claimed ones are skipped while their claim holds",
                   ids(store.claimExpired(now, 10, lease)), is(List.of("third", "exact")));
        assertThat(ids(store.claimExpired(now.plusSeconds(29), 10, lease)), is(List.of("later")));
        assertThat("a lapsed claim is taken again, oldest expiry first",
                   ids(store.claimExpired(now.plusSeconds(31), 2, lease)), is(List.of("first", "second")));
        store.create(expiringAt("newcomer", now.plusSeconds(31), AuthorizationState.APPROVED));
        assertThat(ids(store.claimExpired(now.plusSeconds(31), 10, lease)), is(List.of("third", "exact", "newcomer")));
    }

    @Test
    void anAuthorizationThatLeftApprovedIsNeverClaimedForExpiry() {
        InMemoryAuthorizationStore store = InMemoryAuthorizationStore.create(100);
        AuthorizationRecord a = store.create(authorization("a"));
        store.create(authorization("b"));
        Instant before = a.expiresAt().minusSeconds(60);
        AuthorizationStore.Reserved reserved = (AuthorizationStore.Reserved) store.reserve(
                "a", pending("v1", OperationRecord.VOID, "a", 0), 50, before);
        store.settle(reserved.operation(), true, null, before);
        Instant after = a.expiresAt().plusSeconds(1);
        assertThat(ids(store.claimExpired(after, 10, Duration.ofSeconds(30))), is(List.of("b")));
        assertThat(ids(store.claimExpired(after.plusSeconds(60), 10, Duration.ofSeconds(30))), is(List.of("b")));
    }

    @Test
    void aKeyStaysBoundToItsFirstRequestUntilTheClaimThatBoundItUnbindsIt() {
        KeyBindings bindings = InMemoryKeyBindings.create(10);
        List<Identity> first = List.of(new Identity("f1", "att_1", null));
        List<Identity> other = List.of(new Identity("f2", "att_2", null));
        assertThat(bindings.bind("k", first, 0), is(new KeyBindings.Bound(0, true)));
        assertThat(bindings.bind("k", first, 0), is(new KeyBindings.Bound(0, false)));
        assertThat(bindings.bind("k", other, 0).identity(), is(-1));
        bindings.unbind("k", "f2");
        assertThat("another fingerprint never unbinds it", bindings.bind("k", other, 0).identity(), is(-1));
        bindings.unbind("k", "f1");
        assertThat(bindings.bind("k", other, 0), is(new KeyBindings.Bound(0, true)));
    }

    @Test
    void aKeyBoundUnderThePreviousSecretMatchesItsIdentity() {
        KeyBindings bindings = InMemoryKeyBindings.create(10);
        bindings.bind("k", List.of(new Identity("old", "att_old", null)), 0);
        List<Identity> rotated = List.of(new Identity("new", "att_new", null), new Identity("old", "att_old", null));
        assertThat(bindings.bind("k", rotated, 0).identity(), is(1));
    }
}
