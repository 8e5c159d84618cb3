package com.example.payments.issuer;

/**
 * Counters of a {@link SimulatedIssuer} since it started; the issuer simulator serves them as JSON on
 * {@code GET /stats}, with these field names.
 *
 * @param requests                     authorization calls answered (after the simulated latency), whatever the answer;
 *                                     malformed calls (400) excluded
 * @param authorizations               decisions made: {@code approved + declined}; a repeated attempt id adds none
 * @param approved                     approvals made
 * @param declined                     declines made
 * @param unavailable                  calls answered as an unreachable issuer (no decision, nothing recorded)
 * @param duplicateAttempts            calls with an attempt id already in the ledger, answered from it
 * @param attemptIdConflicts           of those, calls whose business payment differs from the recorded one (the
 *                                     caller reused an attempt id for another payment: answered with the recorded
 *                                     decision all the same)
 * @param paymentsApprovedMoreThanOnce business payments (merchant, reference, amount, currency, card) approved under
 *                                     two or more different attempt ids: a duplicate that a changed attempt id hides
 *                                     from the ledger; 0 when no payment was authorized twice
 * @param ledgerEntries                attempt ids remembered now
 * @param evictions                    attempt ids forgotten before their retention because the ledger was full
 * @param inFlight                     calls being answered now (held by the simulated latency)
 * @param reversals                    attempts reversed (a reversal id applied to an approved attempt; each reversal id
 *                                     once, a reversal of an attempt never approved is none)
 * @param paymentsApprovedTwiceNet     business payments that hold two or more approvals now, net of reversals: what a
 *                                     cardholder would see as a double hold (with attempt deduplication off, also the
 *                                     approvals of one attempt id sent twice)
 */
public record IssuerStats(long requests, long authorizations, long approved, long declined, long unavailable,
                          long duplicateAttempts, long attemptIdConflicts, long paymentsApprovedMoreThanOnce,
                          long ledgerEntries, long evictions, long inFlight, long reversals,
                          long paymentsApprovedTwiceNet) {
}
