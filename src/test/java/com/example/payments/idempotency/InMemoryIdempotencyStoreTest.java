package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/** The store contract against {@link InMemoryIdempotencyStore}, plus its own bound ({@code max-keys}). */
class InMemoryIdempotencyStoreTest extends IdempotencyStoreContract {

    private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.create(1000);
    private final List<Identity> request = List.of(identity("f"));

    @Override
    IdempotencyStore store() {
        return store;
    }

    @Override
    void sweep() {
        store.sweep();
    }

    private static String key(String idempotencyKey) {
        return RequestIdentities.lookupKey("authorize", "m_1", new IdempotencyKey(idempotencyKey));
    }

    @Test
    void aFullStoreRefusesNewKeysAndEvictsNothing() {
        InMemoryIdempotencyStore small = InMemoryIdempotencyStore.create(2);
        small.claim(key("1"), request, LONG, Quota.UNLIMITED);
        small.claim(key("2"), request, LONG, Quota.UNLIMITED);
        assertThat(small.full().isPresent(), is(true));
        assertThat(small.claim(key("3"), request, LONG, Quota.UNLIMITED), is(new Claim.Full()));
        assertThat(small.claim(key("1"), request, LONG, Quota.UNLIMITED), is(new Claim.InFlight()));
    }

    @Test
    void sweepingDropsExpiredRecordsAndFreesCapacity() throws InterruptedException {
        InMemoryIdempotencyStore small = InMemoryIdempotencyStore.create(1);
        small.claim(key("1"), request, Duration.ofMillis(50), Quota.UNLIMITED);
        Thread.sleep(100);
        assertThat(small.full().isPresent(), is(true));
        assertThat(small.sweep(), is(1));
        assertThat(small.full().isPresent(), is(false));
        assertThat(small.claim(key("2"), request, LONG, Quota.UNLIMITED), instanceOf(Claim.Acquired.class));
    }

    @Test
    void aMerchantsCountsReturnToZeroWhenItsRecordsAreReleasedCompletedAndSwept() throws InterruptedException {
        InMemoryIdempotencyStore counted = InMemoryIdempotencyStore.create(100);
        Identity identity = identity("c");
        Claim.Acquired released = (Claim.Acquired) counted.claim(key("r"), request, LONG, Quota.UNLIMITED);
        Claim.Acquired completed = (Claim.Acquired) counted.claim(key("c"), List.of(identity), LONG, Quota.UNLIMITED);
        counted.claim(key("l"), request, Duration.ofMillis(50), Quota.UNLIMITED);
        assertThat(counted.usage("m_1"), is(new int[] {3, 3}));

        counted.release(key("r"), released.token());
        counted.recordAndComplete(key("c"), identity, completed.token(), decision(identity, "done"),
                                  Duration.ofMillis(50));
        assertThat(counted.usage("m_1"), is(new int[] {1, 2}));

        Thread.sleep(100);
        counted.sweep();
        assertThat(counted.usage("m_1"), is(new int[] {0, 0}));
        assertThat(counted.size(), is(0));
    }

    @Test
    void sweepingDropsWhatExpiredAndKeepsLiveRenewedAndReclaimedKeys() throws InterruptedException {
        InMemoryIdempotencyStore swept = InMemoryIdempotencyStore.create(100);
        Duration brief = Duration.ofMillis(50);
        Identity completedIdentity = identity("done");
        swept.claim(key("lapsed"), request, brief, Quota.UNLIMITED);
        swept.claim(key("live"), request, LONG, Quota.UNLIMITED);
        Claim.Acquired renewed = (Claim.Acquired) swept.claim(key("renewed"), request, brief, Quota.UNLIMITED);
        swept.claim(key("reclaimed"), request, brief, Quota.UNLIMITED);
        Claim.Acquired completed = (Claim.Acquired) swept.claim(key("completed"), List.of(completedIdentity), LONG,
                                                                Quota.UNLIMITED);
        swept.recordAndComplete(key("completed"), completedIdentity, completed.token(),
                                decision(completedIdentity, "done"), brief);
        assertThat(swept.renew(key("renewed"), renewed.token(), LONG), is(true));
        Thread.sleep(100);
        // Lapsed, so claimed anew with a long lease: its first lease's expiry is due, the record is not.
        assertThat(swept.claim(key("reclaimed"), request, LONG, Quota.UNLIMITED), instanceOf(Claim.Acquired.class));

        assertThat(swept.sweep(), is(2));

        assertThat(swept.size(), is(3));
        assertThat(swept.claim(key("live"), request, LONG, Quota.UNLIMITED), is(new Claim.InFlight()));
        assertThat(swept.claim(key("renewed"), request, LONG, Quota.UNLIMITED), is(new Claim.InFlight()));
        assertThat(swept.claim(key("reclaimed"), request, LONG, Quota.UNLIMITED), is(new Claim.InFlight()));
        assertThat(swept.findDecision(completedIdentity.decision()).isPresent(), is(false));
        assertThat(swept.sweep(), is(0));
    }
}
