package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * Sends the reversal of one attempt for the {@link Reconciler}: always under the same reversal id (derived from the
 * attempt id, so the same on every replica and after a restart; the acquirer applies it at most once), up to three
 * sends a run with 200 ms then 400 ms between them, and when none is confirmed, not again for 2, 4, ... up to 60 s.
 * Counts {@code unknown_outcome_reversals_total{outcome}}: each send, {@code confirmed} or {@code unconfirmed}.
 */
final class Reversals {

    /** Sends per run at most. */
    static final int SENDS_PER_RUN = 3;

    private static final System.Logger LOGGER = System.getLogger(Reversals.class.getName());
    private static final Duration FIRST_PAUSE = Duration.ofMillis(200);
    private static final Duration MAX_BACKOFF = Duration.ofMinutes(1);

    private final BoundedAuthorizer authorizer;
    private final Counter confirmed;
    private final Counter unconfirmed;
    // Reversals the acquirer did not confirm: attempt id -> [runs failed, System.nanoTime() of the next try].
    private final Map<String, long[]> backoff = new ConcurrentHashMap<>();

    Reversals(BoundedAuthorizer authorizer, MeterRegistry meters) {
        this.authorizer = authorizer;
        this.confirmed = sends(meters, "confirmed");
        this.unconfirmed = sends(meters, "unconfirmed");
    }

    /**
     * The reversal id of an attempt.
     *
     * @param attemptId the attempt id
     * @return {@code rev_} + 32 hex characters, the same for every call
     */
    static String reversalId(String attemptId) {
        return "rev_" + UUID.nameUUIDFromBytes(("reversal:" + attemptId).getBytes(StandardCharsets.UTF_8))
                .toString().replace("-", "");
    }

    /**
     * Sends the reversal until the acquirer confirms it, at most {@link #SENDS_PER_RUN} times.
     *
     * @param outcome the unknown outcome whose attempt is reversed
     * @param mayCall asked before each send: {@code false} ends this run's sends (e.g. the key's lease no longer
     *                covers a call)
     * @return the acquirer's time of the reversal once confirmed (a reversal of an attempt it never approved is
     *         confirmed too), empty when no send was
     * @throws InterruptedException when the worker is stopped
     */
    Optional<Instant> send(UnknownOutcome outcome, java.util.function.BooleanSupplier mayCall)
            throws InterruptedException {
        Authorizer.Reversal reversal = new Authorizer.Reversal(reversalId(outcome.attemptId()), outcome.attemptId());
        Duration pause = FIRST_PAUSE;
        for (int send = 1; send <= SENDS_PER_RUN && mayCall.getAsBoolean(); send++) {
            if (authorizer.reverse(reversal) instanceof BoundedAuthorizer.Decided decided) {
                confirmed.increment();
                return Optional.of(decided.decision().decidedAt());
            }
            unconfirmed.increment();
            if (send < SENDS_PER_RUN) {
                Thread.sleep(pause);
                pause = pause.multipliedBy(2);
            }
        }
        long[] state = backoff.computeIfAbsent(outcome.attemptId(), id -> new long[2]);
        state[0]++;
        long wait = Math.min(MAX_BACKOFF.toNanos(), Duration.ofSeconds(1).toNanos() << Math.min(state[0], 6));
        state[1] = System.nanoTime() + wait;
        LOGGER.log(Level.WARNING, "Reversal {0} of attempt {1} not confirmed after {2,number,#} sends; sent again in "
                                  + "{3,number,#} s", reversal.reversalId(), outcome.attemptId(),
                   state[0] * SENDS_PER_RUN, Duration.ofNanos(wait).toSeconds());
        return Optional.empty();
    }

    /**
     * Whether an attempt's reversal waits out its backoff.
     *
     * @param attemptId the attempt id
     * @return {@code true} to skip it this run
     */
    boolean backingOff(String attemptId) {
        long[] state = backoff.get(attemptId);
        return state != null && state[1] - System.nanoTime() > 0;
    }

    /**
     * Forgets an attempt's backoff once its outcome is resolved.
     *
     * @param attemptId the attempt id
     */
    void forget(String attemptId) {
        backoff.remove(attemptId);
    }

    private static Counter sends(MeterRegistry meters, String outcome) {
        return meters.getOrCreate(Counter.builder("unknown_outcome_reversals")
                .tags(List.of(Tag.create("outcome", outcome)))
                .description("Reversals sent to the acquirer, by whether it confirmed them"));
    }
}
