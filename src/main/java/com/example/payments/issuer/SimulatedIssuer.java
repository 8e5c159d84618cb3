package com.example.payments.issuer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.helidon.metrics.api.MeterRegistry;

/**
 * A card issuer that deduplicates on the attempt id, standing in for a real one: it decides by {@link IssuerRules},
 * answers the same decision with the same decision time for the same attempt id and counts it once
 * ({@link IssuerLedger}). The built-in
 * {@code rule-based} authorizer runs one in the service's process; the issuer simulator of the tests and load tests
 * ({@code IssuerSimulator}, test scope: never in the service's jar) serves one over HTTP.
 *
 * <p>Metrics, in the registry of the process it runs in ({@code scope="application"} added by Helidon):
 * <ul>
 *     <li>{@code issuer_authorizations_total{decision}}: {@code approved}, {@code declined}; one per attempt id</li>
 *     <li>{@code issuer_duplicate_attempts_total}: calls with a known attempt id, answered from the ledger</li>
 *     <li>{@code issuer_unavailable_total}: calls answered as an unreachable issuer</li>
 *     <li>{@code issuer_payments_approved_more_than_once_total}: business payments approved under two or more
 *     attempt ids</li>
 *     <li>{@code issuer_attempt_conflicts_total}: a known attempt id presented for a different payment</li>
 *     <li>{@code issuer_ledger_evictions_total}: attempt ids dropped before their retention because the ledger was
 *     full</li>
 * </ul>
 */
public final class SimulatedIssuer {

    /** The issuer's answer to one call. */
    public sealed interface Answer {
    }

    /**
     * A decision.
     *
     * @param decision  approve, or decline with a code
     * @param decidedAt when the issuer made the decision (millisecond precision): the same on every answer for one
     *                  attempt id, so that the service can build a byte-identical authorization from any of them
     * @param replayed  {@code true} when answered from the ledger (the attempt id was seen before)
     */
    public record Decided(IssuerRules.Decision decision, Instant decidedAt, boolean replayed) implements Answer {
    }

    /** The issuer cannot be reached: no decision, nothing recorded (the caller cannot know the outcome). */
    public record Unavailable() implements Answer {
    }

    private final IssuerSettings settings;
    private final IssuerLedger ledger;
    private final AtomicLong inFlight = new AtomicLong();
    private final IssuerCaptures captures;

    private final IssuerReversals reversals;

    private SimulatedIssuer(IssuerSettings settings, LongSupplier nanoClock, Clock clock, IssuerMeters meters,
                            boolean deduplicate) {
        this.settings = settings;
        this.captures = new IssuerCaptures(settings.ledgerRetention(), settings.ledgerMaxEntries(), nanoClock, clock);
        this.ledger = new IssuerLedger(settings.ledgerRetention(), settings.ledgerMaxEntries(), nanoClock, clock,
                                       meters, deduplicate);
        this.reversals = new IssuerReversals(ledger, settings.ledgerMaxEntries(), clock);
    }

    /**
     * Creates an issuer and registers its metrics.
     *
     * @param settings limit, simulated latency and ledger bounds
     * @param meters   the registry of the process it runs in
     * @return the issuer
     */
    public static SimulatedIssuer create(IssuerSettings settings, MeterRegistry meters) {
        return create(settings, meters, true);
    }

    /**
     * Creates an issuer that may not deduplicate.
     *
     * @param settings    limit, simulated latency and ledger bounds
     * @param meters      the registry of the process it runs in
     * @param deduplicate {@code false} for an acquirer that decides every call afresh, a known attempt id too (what
     *                    a double send costs shows in {@link IssuerStats#paymentsApprovedTwiceNet()})
     * @return the issuer
     */
    public static SimulatedIssuer create(IssuerSettings settings, MeterRegistry meters, boolean deduplicate) {
        return new SimulatedIssuer(settings, System::nanoTime, Clock.systemUTC(), IssuerMeters.create(meters),
                                   deduplicate);
    }

    /**
     * An issuer with a given clock and no metrics, for tests of expiry: its decision times are the epoch plus the
     * clock's value.
     *
     * @param settings  settings
     * @param nanoClock monotonic time in ns
     * @return the issuer
     */
    static SimulatedIssuer create(IssuerSettings settings, LongSupplier nanoClock) {
        return create(settings, nanoClock, true);
    }

    /**
     * An issuer with a given clock and no metrics that may not deduplicate, for tests.
     *
     * @param settings    settings
     * @param nanoClock   monotonic time in ns
     * @param deduplicate {@code false} to decide every call afresh
     * @return the issuer
     */
    static SimulatedIssuer create(IssuerSettings settings, LongSupplier nanoClock, boolean deduplicate) {
        Clock clock = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.EPOCH.plusNanos(nanoClock.getAsLong());
            }
        };
        return new SimulatedIssuer(settings, nanoClock, clock, IssuerMeters.none(), deduplicate);
    }

    /**
     * Answers one authorization after the simulated latency.
     *
     * @param request the call; its attempt id is the deduplication key
     * @return the decision (recorded or new), or unavailable for the unreachable test card
     * @throws InterruptedException when interrupted during the simulated latency; nothing is recorded then
     */
    public Answer authorize(IssuerRequest request) throws InterruptedException {
        inFlight.incrementAndGet();
        try {
            pause();
            Answer answer = ledger.record(request, IssuerRules.decide(request.cardNumber(), request.amount(),
                                                                      settings.defaultLimit()));
            if (answer instanceof Decided decided && decided.decision().approved()) {
                captures.approved(request.attemptId(), request.amount());
            }
            return answer;
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * Answers one capture after the simulated latency: refuses over-capture, a capture after a void and an unknown
     * authorization itself; the same answer again for a known attempt id.
     *
     * @param attemptId              the capture's attempt id
     * @param authorizationAttemptId the authorization's
     * @param amount                 minor units
     * @return the decision
     * @throws InterruptedException when interrupted during the simulated latency; nothing is recorded then
     */
    public Decided capture(String attemptId, String authorizationAttemptId, long amount) throws InterruptedException {
        pause();
        return captures.capture(attemptId, authorizationAttemptId, amount);
    }

    /**
     * Answers one void after the simulated latency; the same answer again for a known attempt id.
     *
     * @param attemptId              the void's attempt id
     * @param authorizationAttemptId the authorization's
     * @return the decision
     * @throws InterruptedException when interrupted during the simulated latency; nothing is recorded then
     */
    public Decided voidRemainder(String attemptId, String authorizationAttemptId) throws InterruptedException {
        pause();
        return captures.voidRemainder(attemptId, authorizationAttemptId);
    }

    /**
     * Applies a reversal after the simulated latency, at most once per reversal id: the attempt's approvals are
     * reversed, or nothing happens when it was never approved; the same answer again for a known reversal id.
     *
     * @param reversalId the reversal's id
     * @param attemptId  the authorization attempt it reverses
     * @return the answer: approved when reversed, declined {@code not_approved} when there was nothing to reverse,
     *         with the time it was first applied
     * @throws InterruptedException when interrupted during the simulated latency; nothing is applied then
     */
    public Decided reverse(String reversalId, String attemptId) throws InterruptedException {
        pause();
        return reversals.reverse(reversalId, attemptId);
    }

    /**
     * Fresh decisions on captures and voids, each attempt id counted once.
     *
     * @return count
     */
    public long freshOperationDecisions() {
        return captures.freshDecisions();
    }

    /**
     * Every capture and void decision and every approved authorization's captured amount, as the issuer sees them.
     *
     * @return a snapshot
     */
    IssuerCaptures.Ledger operationLedger() {
        return captures.ledger();
    }

    /**
     * The counters.
     *
     * @return a snapshot
     */
    public IssuerStats stats() {
        return ledger.stats(inFlight.get());
    }

    private void pause() throws InterruptedException {
        Duration latency = settings.latency();
        long millis = latency.toMillis();
        if (!settings.jitter().isZero()) {
            millis += ThreadLocalRandom.current().nextLong(settings.jitter().toMillis() + 1);
        }
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }
}
