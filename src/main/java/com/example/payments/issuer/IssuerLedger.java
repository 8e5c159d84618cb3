package com.example.payments.issuer;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * What the simulated issuer remembers: the decision made for each attempt id and when it was made, so that the same
 * attempt id always gets the same decision with the same decision time and is counted once, and how many approvals
 * each business payment got, so that a payment approved under two different attempt ids shows up
 * ({@link IssuerStats#paymentsApprovedMoreThanOnce()}).
 *
 * <p>Memory is bounded two ways: an entry expires {@code retention} after it was recorded, and at most
 * {@code maxEntries} are kept (the oldest is evicted first, before its retention ends). A business payment is kept
 * only as a keyed hash ({@link PaymentHash}: HMAC-SHA256 with a random key made at startup) of merchant, reference,
 * amount, currency and PAN; no PAN is stored. One lock guards everything: each call holds it for microseconds.
 */
final class IssuerLedger {

    private static final System.Logger LOGGER = System.getLogger(IssuerLedger.class.getName());

    /** A recorded decision and when it was made (wall clock, the same on every answer for its attempt id). */
    private record Entry(IssuerRules.Decision decision, Instant decidedAt, String payment, long expiresAtNanos) {
    }

    /** Decline code answered for an attempt id that was reversed. */
    static final String REVERSED = "reversed";

    private final long retentionNanos;
    private final int maxEntries;
    private final LongSupplier nanoClock;
    private final Clock clock;
    private final PaymentHash paymentHash = new PaymentHash();
    private final IssuerMeters meters;
    private final ReentrantLock lock = new ReentrantLock();
    // Insertion order is expiry order (one retention for all): expired and evicted entries are always at the head.
    private final LinkedHashMap<String, Entry> attempts = new LinkedHashMap<>();
    private final Map<String, Integer> approvalsByPayment = new HashMap<>();
    // Approvals of each attempt id not reversed: one at most while attempts are deduplicated.
    private final Map<String, Integer> approvalsByAttempt = new HashMap<>();
    private final boolean deduplicate;
    private long reversals;
    private long requests;
    private long approved;
    private long declined;
    private long unavailable;
    private long duplicates;
    private long conflicts;
    private long paymentsApprovedMoreThanOnce;
    private long evictions;

    IssuerLedger(Duration retention, int maxEntries, LongSupplier nanoClock, Clock clock, IssuerMeters meters) {
        this(retention, maxEntries, nanoClock, clock, meters, true);
    }

    /**
     * A ledger.
     *
     * @param deduplicate {@code false} to decide every call afresh, a known attempt id too (an acquirer that does not
     *                    deduplicate, for soak tests that count what a double send costs)
     */
    IssuerLedger(Duration retention, int maxEntries, LongSupplier nanoClock, Clock clock, IssuerMeters meters,
                 boolean deduplicate) {
        this.deduplicate = deduplicate;
        this.meters = meters;
        this.clock = clock;
        this.retentionNanos = retention.toNanos();
        this.maxEntries = maxEntries;
        this.nanoClock = nanoClock;
    }

    /**
     * Answers one call: the recorded decision when the attempt id is known, else the rules' outcome, recorded when it
     * is a decision.
     *
     * @param request the call
     * @param outcome what the rules say for it
     * @return the answer
     */
    SimulatedIssuer.Answer record(IssuerRequest request, IssuerRules.Outcome outcome) {
        lock.lock();
        try {
            requests++;
            long now = nanoClock.getAsLong();
            expire(now);
            String payment = paymentHash.of(request);
            Entry known = attempts.get(request.attemptId());
            if (known != null && known.payment() == null) {
                // A tombstone: the attempt was reversed before it came. Never approved after its reversal, whether
                // attempts are deduplicated or not.
                declined++;
                meters.count(IssuerMeters.Event.DECLINED);
                return new SimulatedIssuer.Decided(known.decision(), clock.instant().truncatedTo(ChronoUnit.MILLIS),
                                                   false);
            }
            if (known != null && !deduplicate && REVERSED.equals(known.decision().declineCode())) {
                // Reversed after it was approved: a repeat of the attempt id is not approved again (deduplicated, the
                // branch below answers it the same way).
                return new SimulatedIssuer.Decided(known.decision(), known.decidedAt(), true);
            }
            if (known != null && deduplicate) {
                duplicates++;
                meters.count(IssuerMeters.Event.DUPLICATE_ATTEMPT);
                if (!known.payment().equals(payment)) {
                    conflicts++;
                    meters.count(IssuerMeters.Event.ATTEMPT_CONFLICT);
                    LOGGER.log(Level.WARNING, "Attempt {0} repeated for a different payment; answered with the "
                                              + "decision recorded for the first one", request.attemptId());
                }
                return new SimulatedIssuer.Decided(known.decision(), known.decidedAt(), true);
            }
            return switch (outcome) {
            case IssuerRules.Unreachable unreachable -> {
                unavailable++;
                meters.count(IssuerMeters.Event.UNAVAILABLE);
                yield new SimulatedIssuer.Unavailable();
            }
            case IssuerRules.Decision decision -> {
                // Millisecond precision: what the answer carries, so that every answer for the attempt is the same.
                Instant decidedAt = clock.instant().truncatedTo(ChronoUnit.MILLIS);
                attempts.put(request.attemptId(), new Entry(decision, decidedAt, payment, now + retentionNanos));
                count(decision, payment);
                if (decision.approved()) {
                    approvalsByAttempt.merge(request.attemptId(), 1, Integer::sum);
                }
                evictOverflow();
                yield new SimulatedIssuer.Decided(decision, decidedAt, false);
            }
            };
        } finally {
            lock.unlock();
        }
    }

    /**
     * A snapshot of the counters.
     *
     * @param inFlight calls being answered now, counted by the caller
     * @return the stats
     */
    IssuerStats stats(long inFlight) {
        lock.lock();
        try {
            expire(nanoClock.getAsLong());
            long twiceNet = approvalsByPayment.values().stream().filter(count -> count >= 2).count();
            return new IssuerStats(requests, approved + declined, approved, declined, unavailable, duplicates,
                                   conflicts, paymentsApprovedMoreThanOnce, attempts.size(), evictions, inFlight,
                                   reversals, twiceNet);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reverses every approval of an attempt id: the payment's hold is released, and a later call with the attempt id
     * is answered {@code DECLINED reversed}, deduplicated or not. A reversal of an attempt id not seen yet leaves a
     * tombstone (kept like a decision, for the ledger's retention): the call it reverses, arriving later, is declined
     * {@code reversed}, never approved after its reversal.
     *
     * @param attemptId the attempt id
     * @return {@code true} when an approval was reversed; {@code false} when the attempt was never approved (or is
     *         reversed already, or forgotten): nothing to do
     */
    boolean reverse(String attemptId) {
        lock.lock();
        try {
            Entry entry = attempts.get(attemptId);
            Integer approvals = approvalsByAttempt.remove(attemptId);
            if (entry == null) {
                // Reversed before it came (a call still on its way, or never sent): a tombstone declines it later.
                attempts.put(attemptId, new Entry(new IssuerRules.Decision(false, REVERSED),
                                                  clock.instant().truncatedTo(ChronoUnit.MILLIS), null,
                                                  nanoClock.getAsLong() + retentionNanos));
                evictOverflow();
                return false;
            }
            if (approvals == null) {
                return false;
            }
            approvalsByPayment.computeIfPresent(entry.payment(), (payment, count) -> count <= approvals ? null
                    : count - approvals);
            attempts.put(attemptId, new Entry(new IssuerRules.Decision(false, REVERSED), entry.decidedAt(),
                                              entry.payment(), entry.expiresAtNanos()));
            reversals++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void count(IssuerRules.Decision decision, String payment) {
        if (!decision.approved()) {
            declined++;
            meters.count(IssuerMeters.Event.DECLINED);
            return;
        }
        approved++;
        meters.count(IssuerMeters.Event.APPROVED);
        if (approvalsByPayment.merge(payment, 1, Integer::sum) == 2) {
            paymentsApprovedMoreThanOnce++;
            meters.count(IssuerMeters.Event.PAYMENT_APPROVED_MORE_THAN_ONCE);
        }
    }

    private void expire(long now) {
        Iterator<Map.Entry<String, Entry>> oldest = attempts.entrySet().iterator();
        while (oldest.hasNext()) {
            Map.Entry<String, Entry> entry = oldest.next();
            if (entry.getValue().expiresAtNanos() - now > 0) {
                return;
            }
            oldest.remove();
            forget(entry.getKey(), entry.getValue());
        }
    }

    private void evictOverflow() {
        Iterator<Map.Entry<String, Entry>> oldest = attempts.entrySet().iterator();
        while (attempts.size() > maxEntries) {
            Map.Entry<String, Entry> entry = oldest.next();
            oldest.remove();
            forget(entry.getKey(), entry.getValue());
            evictions++;
            meters.count(IssuerMeters.Event.EVICTION);
        }
    }

    private void forget(String attemptId, Entry entry) {
        Integer approvals = approvalsByAttempt.remove(attemptId);
        if (approvals != null) {
            approvalsByPayment.computeIfPresent(entry.payment(), (payment, count) -> count <= approvals ? null
                    : count - approvals);
        }
    }
}
