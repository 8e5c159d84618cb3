package com.example.payments.idempotency;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * One key record of the in-memory store: IN_FLIGHT while {@code decision == null}. {@code expiresAtNanos} is the
 * lease, or once completed the decision's retention. An expired record counts as absent; it stays until swept so that
 * the next claim's token keeps growing ({@link #nextToken}).
 *
 * @param fingerprint    the fingerprint of the identity the key is held or completed under
 * @param token          the fencing token of the acquisition
 * @param decision       where the key's decision is recorded, or {@code null} while IN_FLIGHT
 * @param expiresAtNanos when it expires, in {@link System#nanoTime()}
 */
record KeyRecord(String fingerprint, long token, DecisionKey decision, long expiresAtNanos) {

    boolean inFlight() {
        return decision == null;
    }

    boolean live(long now) {
        return expiresAtNanos - now > 0;
    }

    boolean heldWith(long candidate, long now) {
        return decision == null && token == candidate && live(now);
    }

    // Microseconds of the wall clock, so that tokens keep growing when the process restarts with an empty store;
    // one more than the key's last token when the clock has not moved (or moved back).
    static long nextToken(KeyRecord previous) {
        Instant now = Instant.now();
        long clock = ChronoUnit.MICROS.between(Instant.EPOCH, now);
        return previous == null ? clock : Math.max(clock, previous.token() + 1);
    }
}
