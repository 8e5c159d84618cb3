package com.example.payments.issuer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
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
 * oldest forgotten first.
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

    /** A capture's or void's answer, until its retention ends. */
    private record Answer(SimulatedIssuer.Decided decided, long expiresAtNanos) {
    }

    // Insertion order is expiry order (one retention for all): expired entries are always at the head.
    private final Map<String, Held> authorizations;
    private final Map<String, Answer> answers;
    private final long retentionNanos;
    private final LongSupplier nanoClock;
    private final Clock clock;
    private long fresh;

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
        SimulatedIssuer.Decided known = known(attemptId);
        if (known != null) {
            return known;
        }
        Held held = authorizations.get(authorizationAttemptId);
        String declined = held == null ? "unknown_authorization" : held.voided ? "voided"
                : held.captured + amount > held.amount ? "over_capture" : null;
        if (declined == null) {
            held.captured += amount;
        }
        return answer(attemptId, declined);
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
        SimulatedIssuer.Decided known = known(attemptId);
        if (known != null) {
            return known;
        }
        Held held = authorizations.get(authorizationAttemptId);
        String declined = held == null ? "unknown_authorization" : held.voided ? "voided" : null;
        if (declined == null) {
            held.voided = true;
        }
        return answer(attemptId, declined);
    }

    /**
     * Fresh decisions on captures and voids (each attempt id counted once).
     *
     * @return count
     */
    synchronized long freshDecisions() {
        return fresh;
    }

    private SimulatedIssuer.Decided answer(String attemptId, String declineCode) {
        fresh++;
        SimulatedIssuer.Decided answer = new SimulatedIssuer.Decided(declineCode == null
                ? new IssuerRules.Decision(true, null) : new IssuerRules.Decision(false, declineCode),
                Instant.now(clock).truncatedTo(ChronoUnit.MILLIS), false);
        answers.put(attemptId, new Answer(answer, nanoClock.getAsLong() + retentionNanos));
        return answer;
    }

    private SimulatedIssuer.Decided known(String attemptId) {
        Answer known = answers.get(attemptId);
        return known == null ? null
                : new SimulatedIssuer.Decided(known.decided().decision(), known.decided().decidedAt(), true);
    }

    // Drops the entries past their retention, from the head of each map until the first one still kept; returns now.
    private long expire() {
        long now = nanoClock.getAsLong();
        for (Iterator<Held> oldest = authorizations.values().iterator();
             oldest.hasNext() && oldest.next().expiresAtNanos - now <= 0; ) {
            oldest.remove();
        }
        for (Iterator<Answer> oldest = answers.values().iterator();
             oldest.hasNext() && oldest.next().expiresAtNanos() - now <= 0; ) {
            oldest.remove();
        }
        return now;
    }

    private static <V> Map<String, V> bounded(int max) {
        return new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
    }
}
