package com.example.payments.authorization;

import java.time.Instant;
import java.util.List;

/**
 * Where unknown outcomes of authorizations are kept until they are resolved: PostgreSQL, the system of record
 * ({@code database.PostgresUnknownOutcomes}, table {@code unknown_outcomes}), so that a restart or another replica
 * resolves them; {@link InMemoryUnknownOutcomes} in development (one replica, lost on restart). One record per attempt
 * id: an attempt whose outcome is unknown again (a retry timed out too) gets a later deadline. With
 * {@code authorizer.acquirer-deduplicates: false} every attempt is recorded here before its call too (write-ahead),
 * and removed once its decision is recorded.
 *
 * <p>Every method may throw {@link com.example.payments.idempotency.IdempotencyStore.UnavailableException} when the
 * store cannot be reached.
 */
public interface UnknownOutcomes {

    /**
     * Records an unknown outcome, or moves the deadline of the attempt's record to this one's.
     *
     * @param outcome the outcome
     */
    void record(UnknownOutcome outcome);

    /**
     * Outcomes whose deadline has passed, earliest deadline first: what the reconciler resolves.
     *
     * @param now   the time
     * @param limit at most this many
     * @return the outcomes
     */
    List<UnknownOutcome> due(Instant now, int limit);

    /**
     * Every outcome of one authorization, whatever its deadline: the earlier attempts of a request (an unknown
     * outcome, or an attempt recorded before its call whose execution died or lost its lease), which a retry must
     * resolve before it sends another attempt.
     *
     * @param resourceId the authorization's id
     * @return the outcomes, in no particular order
     */
    List<UnknownOutcome> ofResource(String resourceId);

    /**
     * Removes a resolved outcome.
     *
     * @param attemptId its attempt id
     * @return {@code true} when it was there
     */
    boolean remove(String attemptId);

    /**
     * How many outcomes have a deadline before a time, e.g. one reverse-after ago: unresolved past twice their wait.
     *
     * @param before the time
     * @return count
     */
    long countDueBefore(Instant before);
}
