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

    @Test
    void aFullStoreRefusesNewKeysAndEvictsNothing() {
        InMemoryIdempotencyStore small = InMemoryIdempotencyStore.create(2);
        small.claim("m:1", request, LONG);
        small.claim("m:2", request, LONG);
        assertThat(small.claim("m:3", request, LONG), is(new Claim.Full()));
        assertThat(small.claim("m:1", request, LONG), is(new Claim.InFlight()));
    }

    @Test
    void sweepingDropsExpiredRecordsAndFreesCapacity() throws InterruptedException {
        InMemoryIdempotencyStore small = InMemoryIdempotencyStore.create(1);
        small.claim("m:1", request, Duration.ofMillis(50));
        Thread.sleep(100);
        assertThat(small.sweep(), is(1));
        assertThat(small.claim("m:2", request, LONG), instanceOf(Claim.Acquired.class));
    }
}
