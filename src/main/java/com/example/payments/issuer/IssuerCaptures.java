package com.example.payments.issuer;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The simulated issuer's side of captures and voids: what it approved under each authorization attempt id, how much
 * of it was captured, whether it was voided, and its answer to each capture or void attempt id. An acquirer refuses
 * over-capture and a capture after a void itself, whatever the service in front of it believes, and answers a retry
 * of an attempt id with its first answer (counted once).
 *
 * <p>Bounded like the ledger: at most {@code maxEntries} authorizations and as many operation answers, the oldest
 * forgotten first.
 */
final class IssuerCaptures {

    /** How an approved authorization stands at the issuer. */
    private static final class Held {
        private final long amount;
        private long captured;
        private boolean voided;

        private Held(long amount) {
            this.amount = amount;
        }
    }

    private final Map<String, Held> authorizations;
    private final Map<String, SimulatedIssuer.Decided> answers;
    private final Clock clock;
    private long fresh;

    IssuerCaptures(int maxEntries, Clock clock) {
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
        authorizations.putIfAbsent(attemptId, new Held(amount));
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
        SimulatedIssuer.Decided known = answers.get(attemptId);
        if (known != null) {
            return new SimulatedIssuer.Decided(known.decision(), known.decidedAt(), true);
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
        SimulatedIssuer.Decided known = answers.get(attemptId);
        if (known != null) {
            return new SimulatedIssuer.Decided(known.decision(), known.decidedAt(), true);
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
        answers.put(attemptId, answer);
        return answer;
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
