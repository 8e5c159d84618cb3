package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Issuer decisions on authorizations that arrived after {@code authorizer.timeout}, kept instead of discarded: the
 * request was answered 504 (outcome unknown), but the call goes on for one more timeout, and a decision that comes in
 * that time is kept in this process's memory for {@code authorizer.unknown-outcome.reverse-after}. A retry of the
 * same attempt on this replica then takes it instead of sending the attempt id to the issuer again. A retry on
 * another replica, or after this process restarted, sends it again (the issuer deduplicates it); a decision nobody
 * retried is reversed by the reconciler like any unknown outcome. At most 10000 kept; beyond, a late decision is
 * dropped (the retry sends the attempt again).
 */
final class LateDecisions {

    private static final System.Logger LOGGER = System.getLogger(LateDecisions.class.getName());
    private static final int MAX = 10_000;

    private record Kept(Authorizer.Decision decision, long expiresNanos) {
    }

    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    private final Duration keep;
    private final Duration grace;

    /**
     * Creates the store.
     *
     * @param grace how long a call goes on after its timeout, e.g. {@code authorizer.timeout}
     * @param keep  how long a late decision is kept, e.g. {@code authorizer.unknown-outcome.reverse-after}
     */
    LateDecisions(Duration grace, Duration keep) {
        this.grace = grace;
        this.keep = keep;
    }

    /**
     * Waits, on a thread of the executor, for a timed-out call's decision for one more grace period, and keeps it;
     * cancels the call after that.
     *
     * @param attemptId the attempt id
     * @param call      the call, still running
     * @param executor  where to wait
     */
    void watch(String attemptId, Future<Authorizer.Decision> call, ExecutorService executor) {
        try {
            executor.execute(() -> await(attemptId, call));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            call.cancel(true);
        }
    }

    /**
     * Keeps a decision this process could not record (the resource store was full or unreachable after the issuer
     * decided), so that a retry of its attempt here records it without sending the attempt id again.
     *
     * @param attemptId the attempt id
     * @param decision  the issuer's decision
     */
    void keep(String attemptId, Authorizer.Decision decision) {
        long now = System.nanoTime();
        if (kept.size() >= MAX) {
            kept.values().removeIf(entry -> entry.expiresNanos() - now < 0);
        }
        if (kept.size() < MAX) {
            kept.put(attemptId, new Kept(decision, now + keep.toNanos()));
        }
    }

    /**
     * Takes the late decision of an attempt, if one was kept and is still fresh.
     *
     * @param attemptId the attempt id
     * @return the decision, removed from the store
     */
    Optional<Authorizer.Decision> take(String attemptId) {
        Kept found = kept.remove(attemptId);
        return found == null || found.expiresNanos() - System.nanoTime() < 0 ? Optional.empty()
                : Optional.of(found.decision());
    }

    private void await(String attemptId, Future<Authorizer.Decision> call) {
        try {
            keep(attemptId, call.get(grace.toMillis(), TimeUnit.MILLISECONDS));
            LOGGER.log(Level.INFO, "Issuer decided attempt {0} after the timeout; kept for its retry", attemptId);
        } catch (TimeoutException e) {
            call.cancel(true);
        } catch (ExecutionException e) {
            // Failed late: nothing to keep, the outcome stays unknown.
        } catch (InterruptedException e) {
            call.cancel(true);
        }
    }
}
