package com.example.payments.issuer;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The simulated issuer's reversals ({@code POST /v1/reversals}): each reversal id applied at most once, its answer
 * kept and repeated for every later send of the same id (the oldest forgotten beyond {@code maxEntries}). A reversal
 * of an approved attempt releases its approvals in the {@link IssuerLedger}; of an attempt never approved (declined,
 * unknown, never sent), it does nothing and says so ({@code not_approved}).
 */
final class IssuerReversals {

    /** Decline code of a reversal that found nothing to reverse. */
    static final String NOT_APPROVED = "not_approved";

    private final IssuerLedger ledger;
    private final Clock clock;
    private final Map<String, SimulatedIssuer.Decided> applied;

    IssuerReversals(IssuerLedger ledger, int maxEntries, Clock clock) {
        this.ledger = ledger;
        this.clock = clock;
        this.applied = new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, SimulatedIssuer.Decided> eldest) {
                return size() > maxEntries;
            }
        };
    }

    /**
     * Applies a reversal once.
     *
     * @param reversalId the reversal id
     * @param attemptId  the attempt it reverses
     * @return approved when it reversed an approval, declined {@code not_approved} otherwise; replayed for a known id
     */
    synchronized SimulatedIssuer.Decided reverse(String reversalId, String attemptId) {
        SimulatedIssuer.Decided known = applied.get(reversalId);
        if (known != null) {
            return new SimulatedIssuer.Decided(known.decision(), known.decidedAt(), true);
        }
        boolean reversed = ledger.reverse(attemptId);
        SimulatedIssuer.Decided answer = new SimulatedIssuer.Decided(
                new IssuerRules.Decision(reversed, reversed ? null : NOT_APPROVED),
                clock.instant().truncatedTo(ChronoUnit.MILLIS), false);
        applied.put(reversalId, answer);
        return answer;
    }
}
