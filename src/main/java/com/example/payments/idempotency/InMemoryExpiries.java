package com.example.payments.idempotency;

import java.util.concurrent.PriorityBlockingQueue;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The in-memory store's expiry index: when each key record or decision may have expired, in expiry order, so that a
 * sweep costs what expires, not what is held. Every time a record or decision gets an expiry, its key is queued
 * ({@link PriorityBlockingQueue}, O(log n) per expiry set), and a sweep takes only the queue's due head
 * ({@link #sweep}). A queued expiry that a later one replaced (a renewed lease, a completed or re-claimed key) is
 * dropped when it comes due, after the store checked the record itself: the record, not the queue, decides what is
 * expired.
 */
final class InMemoryExpiries {

    /** When a key record ({@code lookupKey}), a decision ({@code decision}) or both may have expired; null: not. */
    private record Due(long atNanos, String lookupKey, DecisionKey decision) {

        // System.nanoTime() order: by difference, which stays right when the clock's values wrap around.
        static int compare(Due a, Due b) {
            return Long.signum(a.atNanos - b.atNanos);
        }
    }

    private final PriorityBlockingQueue<Due> expiries = new PriorityBlockingQueue<>(64, Due::compare);

    /**
     * Queues an expiry.
     *
     * @param atNanos   when, in {@link System#nanoTime()}
     * @param lookupKey the key record that may expire then, or {@code null}
     * @param decision  the decision that may expire then, or {@code null}
     */
    void add(long atNanos, String lookupKey, DecisionKey decision) {
        expiries.add(new Due(atNanos, lookupKey, decision));
    }

    /**
     * Takes every due expiry off the queue, in expiry order, and has each one's record and decision dropped if they
     * are expired. Costs what came due since the last sweep, not what the store holds.
     *
     * @param now          {@link System#nanoTime()} of the sweep
     * @param dropRecord   drops a key record if it is expired; {@code true} when it did
     * @param dropDecision drops a decision if it is expired
     * @return how many key records were dropped
     */
    int sweep(long now, Predicate<String> dropRecord, Consumer<DecisionKey> dropDecision) {
        int dropped = 0;
        for (Due due = pollDue(now); due != null; due = pollDue(now)) {
            if (due.lookupKey() != null) {
                dropped += dropRecord.test(due.lookupKey()) ? 1 : 0;
            }
            if (due.decision() != null) {
                dropDecision.accept(due.decision());
            }
        }
        return dropped;
    }

    // The earliest queued expiry if it is due, else null.
    private Due pollDue(long now) {
        Due due = expiries.peek();
        if (due == null || due.atNanos() - now > 0) {
            return null;
        }
        // Only the sweeper takes from the queue: what poll() returns is this head, or one inserted meanwhile before
        // it, which is due as well.
        return expiries.poll();
    }
}
