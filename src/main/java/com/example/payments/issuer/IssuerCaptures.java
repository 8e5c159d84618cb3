package com.example.payments.issuer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The simulated issuer's side of captures and voids: what it approved under each authorization attempt id, how much
 * of it was captured, whether it was voided, and its answer to each capture or void attempt id. An acquirer refuses
 * over-capture and a capture after a void itself, whatever the service in front of it believes, and answers a retry
 * of an attempt id with its first answer (counted once).
 *
 * <p>Bounded like the ledger, by time and by count: an entry is forgotten {@code retention} after it was recorded
 * ({@code ledger-retention}, which must cover {@code authorization.validity}: an authorization is captured, voided or
 * expired up to then), and at most {@code maxEntries} authorizations and as many operation answers are kept, the
 * oldest forgotten first (counted as evictions). {@link #ledger()} shows all of it, for soaks that check the
 * service's captures against the acquirer's own view.
 */
final class IssuerCaptures {

    /** How an approved authorization stands at the issuer. */
    private static final class Held {
        private final long amount;
        private final long expiresAtNanos;
        private long captured;
        private boolean voided;

        private Held(long amount, long expiresAtNanos) {
            this.amount = amount;
            this.expiresAtNanos = expiresAtNanos;
        }
    }

    /** The first answer to one capture or void attempt id, and what it was about. */
    private record Answered(SimulatedIssuer.Decided decided, String kind, String authorizationAttemptId, long amount,
                            long sequence, long expiresAtNanos) {
    }

    /**
     * How one approved authorization stands at the issuer.
     *
     * @param amount   approved minor units
     * @param captured minor units captured (approved captures only)
     * @param voided   whether a void was approved
     */
    record HeldView(long amount, long captured, boolean voided) {
    }

    /**
     * The issuer's first (and only) decision on one capture or void attempt id.
     *
     * @param kind                   {@code capture} or {@code void}
     * @param authorizationAttemptId the authorization's attempt id
     * @param amount                 minor units asked for (0 for a void)
     * @param status                 {@code APPROVED} or {@code DECLINED}
     * @param declineCode            when declined
     * @param sequence               the order of the fresh decisions, from 1
     * @param decidedAt              ISO-8601 UTC, millisecond precision
     */
    record OperationView(String kind, String authorizationAttemptId, long amount, String status, String declineCode,
                         long sequence, String decidedAt) {
    }

    /**
     * Everything the issuer remembers about captures and voids.
     *
     * @param freshDecisions capture and void decisions made (an attempt id decided again after it was forgotten
     *                       counts twice)
     * @param evictions      authorizations and answers forgotten because a map was full
     * @param authorizations by authorization attempt id
     * @param operations     by capture or void attempt id
     */
    record Ledger(long freshDecisions, long evictions, Map<String, HeldView> authorizations,
                  Map<String, OperationView> operations) {
    }

    private final Map<String, Held> authorizations;
    private final Map<String, Answered> answers;
    private final long retentionNanos;
    private final LongSupplier nanoClock;
    private final Clock clock;
    private long fresh;
    private long evictions;

    IssuerCaptures(Duration retention, int maxEntries, LongSupplier nanoClock, Clock clock) {
        this.retentionNanos = retention.toNanos();
        this.nanoClock = nanoClock;
        this.clock = clock;
        this.authorizations = bounded(maxEntries);
        this.answers = bounded(maxEntries);
    }

    /**
     * Remembers an approval, so that it can be captured.
     *
     * @param attemptId the authorization's attempt id
     * @param amount    the approved minor units
     */
    synchronized void approved(String attemptId, long amount) {
        long now = expire();
        authorizations.putIfAbsent(attemptId, new Held(amount, now + retentionNanos));
    }

    /**
     * Answers a capture: approved while the authorization is known, not voided, and the captures stay within its
     * amount; else declined ({@code unknown_authorization}, {@code voided}, {@code over_capture}).
     *
     * @param attemptId              the capture's attempt id
     * @param authorizationAttemptId the authorization's
     * @param amount                 minor units
     * @return the answer, the first one again for a known attempt id
     */
    synchronized SimulatedIssuer.Decided capture(String attemptId, String authorizationAttemptId, long amount) {
        expire();
        Answered known = answers.get(attemptId);
        if (known != null) {
            return new SimulatedIssuer.Decided(known.decided().decision(), known.decided().decidedAt(), true);
        }
        Held held = authorizations.get(authorizationAttemptId);
        String declined = held == null ? "unknown_authorization" : held.voided ? "voided"
                : held.captured + amount > held.amount ? "over_capture" : null;
        if (declined == null) {
            held.captured += amount;
        }
        return answer(attemptId, declined, "capture", authorizationAttemptId, amount);
    }

    /**
     * Answers a void: approved while the authorization is known and not voided ({@code unknown_authorization},
     * {@code voided} otherwise); nothing can be captured after it.
     *
     * @param attemptId              the void's attempt id
     * @param authorizationAttemptId the authorization's
     * @return the answer, the first one again for a known attempt id
     */
    synchronized SimulatedIssuer.Decided voidRemainder(String attemptId, String authorizationAttemptId) {
        expire();
        Answered known = answers.get(attemptId);
        if (known != null) {
            return new SimulatedIssuer.Decided(known.decided().decision(), known.decided().decidedAt(), true);
        }
        Held held = authorizations.get(authorizationAttemptId);
        String declined = held == null ? "unknown_authorization" : held.voided ? "voided" : null;
        if (declined == null) {
            held.voided = true;
        }
        return answer(attemptId, declined, "void", authorizationAttemptId, 0);
    }

    /**
     * Fresh decisions on captures and voids (each attempt id counted once).
     *
     * @return count
     */
    synchronized long freshDecisions() {
        return fresh;
    }

    /**
     * A snapshot of every authorization and every capture or void answer remembered now.
     *
     * @return the ledger, sorted by attempt id
     */
    synchronized Ledger ledger() {
        Map<String, HeldView> held = new TreeMap<>();
        authorizations.forEach((id, h) -> held.put(id, new HeldView(h.amount, h.captured, h.voided)));
        Map<String, OperationView> operations = new TreeMap<>();
        answers.forEach((id, a) -> operations.put(id, new OperationView(a.kind(), a.authorizationAttemptId(),
                a.amount(), a.decided().decision().approved() ? "APPROVED" : "DECLINED",
                a.decided().decision().declineCode(), a.sequence(), a.decided().decidedAt().toString())));
        return new Ledger(fresh, evictions, held, operations);
    }

    private SimulatedIssuer.Decided answer(String attemptId, String declineCode, String kind,
                                           String authorizationAttemptId, long amount) {
        fresh++;
        SimulatedIssuer.Decided answer = new SimulatedIssuer.Decided(declineCode == null
                ? new IssuerRules.Decision(true, null) : new IssuerRules.Decision(false, declineCode),
                Instant.now(clock).truncatedTo(ChronoUnit.MILLIS), false);
        answers.put(attemptId, new Answered(answer, kind, authorizationAttemptId, amount, fresh,
                                            nanoClock.getAsLong() + retentionNanos));
        return answer;
    }

    // Drops the entries past their retention, from the head of each map (insertion order is expiry order: one
    // retention for all) until the first one still kept; returns now.
    private long expire() {
        long now = nanoClock.getAsLong();
        for (Iterator<Held> oldest = authorizations.values().iterator();
             oldest.hasNext() && oldest.next().expiresAtNanos - now <= 0; ) {
            oldest.remove();
        }
        for (Iterator<Answered> oldest = answers.values().iterator();
             oldest.hasNext() && oldest.next().expiresAtNanos() - now <= 0; ) {
            oldest.remove();
        }
        return now;
    }

    private <V> Map<String, V> bounded(int max) {
        return new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                boolean full = size() > max;
                if (full) {
                    evictions++;
                }
                return full;
            }
        };
    }
}
