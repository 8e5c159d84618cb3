package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import com.example.payments.observability.Tracing;

import io.helidon.metrics.api.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;

/**
 * The idempotency registry every idempotent operation goes through (IETF draft-ietf-httpapi-idempotency-key-header):
 * claims a key (or recovers its recorded decision), records the decision and completes the key, and releases the key
 * when there is no decision, so that a retry can run. That flow is the one thing it does. Around it: the keys this
 * process holds with their monotonic local lease deadlines ({@link HeldKeys}; {@link #leaseCovers} needs no round
 * trip, and a key stays held until its release succeeded, for the shutdown's {@link #releaseAllHeld}); the renewal of
 * their leases while the requests run ({@link LeaseRenewer}); store writes off the request thread when the store
 * blocks ({@link StoreCalls}: a request interrupted by the end of the drain still records or releases its key); the
 * counters {@code idempotency_requests_total{outcome}}, {@code idempotency_keys_released_total{reason}} and
 * {@code idempotency_quota_total{outcome}} ({@link IdempotencyMeters}).
 */
public final class IdempotencyRegistry implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(IdempotencyRegistry.class.getName());

    /** Why a held key was released. */
    public enum ReleaseReason {
        /** The issuer failed (502): outcome unknown, the client may retry. */
        ISSUER_UNAVAILABLE,
        /** The issuer did not answer in time (504). */
        ISSUER_TIMEOUT,
        /** An unexpected exception (500) or an unavailable store. */
        ERROR,
        /** The drain cut the request off during shutdown. */
        SHUTDOWN,
        /** The lease was lost, or could no longer cover the issuer call, before the issuer was called (503). */
        LEASE_LOST,
        /**
         * The system of record binds the key to another request (422): the registry had lost the record that said so.
         */
        KEY_REUSED,
        /** The resource's state refused the operation (409, 422): nothing was done, a retry checks again. */
        REFUSED
    }

    private final IdempotencyStore store;
    private final Duration lease;
    private final Duration retention;
    private final Quota quota;
    private final HeldKeys held;
    private final StoreCalls storeCalls;
    private final IdempotencyMeters meters;
    private final LeaseRenewer renewer;

    private IdempotencyRegistry(IdempotencyStore store, Duration lease, Duration retention, Duration recordBound,
                                Quota quota, MeterRegistry meters) {
        this.store = store;
        this.storeCalls = new StoreCalls(store.blocks());
        this.lease = lease;
        this.retention = retention;
        this.held = new HeldKeys(recordBound);
        this.quota = quota;
        this.meters = new IdempotencyMeters(meters);
        this.renewer = LeaseRenewer.start(store, lease, held);
    }

    /**
     * Creates the registry and starts renewing leases.
     *
     * @param store       the backend
     * @param lease       {@code idempotency.in-flight-lease}; renewed every third of it
     * @param retention   {@code idempotency.retention}
     * @param recordBound longest the store takes to record a decision ({@code BackendSettings.bounds()}); a lease
     *                    must still cover it after the issuer call
     * @param quota       per-merchant bounds checked on new claims ({@code idempotency.merchant-quota.*})
     * @param meters      where the counters go
     * @return the registry
     */
    public static IdempotencyRegistry create(IdempotencyStore store, Duration lease, Duration retention,
                                             Duration recordBound, Quota quota, MeterRegistry meters) {
        return new IdempotencyRegistry(store, lease, retention, recordBound, quota, meters);
    }

    /**
     * Claims a key for a validated request, or finds its recorded decision. Validation failures never reach here, so
     * they never take a key.
     *
     * @param lookupKey  operation + merchant + idempotency key ({@link RequestIdentities#lookupKey})
     * @param identities the request's identities, current secret first
     * @return the claim; an {@link Claim.Acquired} must be recorded or released; {@link Claim.OverQuota} when the
     *         merchant of the lookup key is at its quota
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached
     */
    public Claim claim(String lookupKey, List<Identity> identities) {
        long sent = System.nanoTime();
        Span span = Tracing.tracer().spanBuilder("idempotency.claim").startSpan();
        Claim claim;
        try (Scope ignored = span.makeCurrent()) {
            claim = storeCalls.offRequestThread("claim", () -> store.claim(lookupKey, identities, lease, quota));
        } catch (IdempotencyStore.UnavailableException e) {
            meters.count("unavailable");
            span.setAttribute(Tracing.IDEMPOTENCY_OUTCOME, "unavailable").setStatus(StatusCode.ERROR).end();
            throw e;
        }
        if (claim instanceof Claim.Acquired acquired) {
            held.hold(acquired, sent + lease.toNanos());
        }
        span.setAttribute(Tracing.IDEMPOTENCY_OUTCOME, meters.claimed(claim)).end();
        return claim;
    }

    /**
     * Whether the lease of a held key still covers a call of the given length and the recording after it: no renewal
     * reported it lost, and its local deadline (send time of the last successful claim or renewal + the lease) is far
     * enough away. Needs no round trip.
     *
     * @param claim the acquired claim
     * @param call  the longest the call can take, e.g. {@code authorizer.timeout}
     * @return {@code false} when the work must not start
     */
    public boolean leaseCovers(Claim.Acquired claim, Duration call) {
        return held.covers(claim, call);
    }

    /**
     * Records a decision and completes the key with it. From here on the key is never released: a retry must replay
     * the decision, not make another one.
     *
     * @param claim    the acquired claim
     * @param identity the identity the key is held under
     * @param decision the decision
     * @return the recorded decision (this one, or the one another execution of the attempt recorded first)
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached: whether the decision was
     *                                               recorded is unknown, and the key is left to its lease
     */
    public Recorded recordAndComplete(Claim.Acquired claim, Identity identity, Decision decision) {
        // Stop renewing first: a renewal racing the completion would report a lease as lost that was not.
        held.decide(claim);
        try {
            Recorded recorded = storeCalls.offRequestThread("record", () -> store.recordAndComplete(
                    claim.lookupKey(), identity, claim.token(), decision, retention));
            if (!recorded.completed()) {
                LOGGER.log(Level.WARNING, "Decision {0} recorded but its idempotency key not completed (the lease was "
                                          + "taken over or the completion failed); the next claim recovers it",
                           decision.key().id());
            }
            return recorded;
        } finally {
            held.remove(claim);
        }
    }

    /**
     * Releases a claimed key without a decision, so that a retry runs again. Runs on a thread of the registry, so an
     * interrupted request thread still releases its key; the key stays held (for {@link #releaseAllHeld}) until a
     * release succeeded or the store says the key is no longer this claim's.
     *
     * @param claim  the acquired claim
     * @param reason why, the {@code reason} tag of {@code idempotency_keys_released_total}
     * @return {@code true} when this call released it
     */
    public boolean release(Claim.Acquired claim, ReleaseReason reason) {
        // No work may start on a key being released.
        if (!held.startRelease(claim)) {
            return false;
        }
        boolean done;
        try {
            done = storeCalls.offRequestThread("release", () -> store.release(claim.lookupKey(), claim.token()));
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Could not release an idempotency key ({0}); the shutdown retries it, and it "
                                      + "frees itself when its lease of {1,number,#} ms expires", e.getMessage(),
                       lease.toMillis());
            return false;
        }
        // Released, or no longer ours (lapsed, taken over): nothing left to release either way.
        if (held.remove(claim) && done) {
            meters.released(reason);
            held.countReleased();
            return true;
        }
        return false;
    }

    /**
     * Releases every key this process still holds without a decision, in parallel; called by the shutdown sequence
     * after the drain. Each release is bounded by the store's own timeout.
     *
     * @param reason reason to count them under
     * @return how many keys this call released
     */
    public int releaseAllHeld(ReleaseReason reason) {
        return held.releaseAll(claim -> release(claim, reason));
    }

    /**
     * Looks up a recorded decision, for {@code GET} of the resource.
     *
     * @param key where it is recorded
     * @return the decision, or empty when unknown or past retention
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached
     */
    public Optional<Decision> findDecision(DecisionKey key) {
        return StoreCalls.onCallerThread("find-decision", () -> store.findDecision(key));
    }

    /**
     * Keys this process holds without a decision right now.
     *
     * @return count
     */
    public int heldCount() {
        return held.heldCount();
    }

    /**
     * Keys released since this registry started, by every path and for every reason: the shutdown summary reports
     * the difference between the signal and its end.
     *
     * @return count
     */
    public long releasedCount() {
        return held.releasedCount();
    }

    /**
     * Counts a request refused before its claim, e.g. {@code draining}.
     *
     * @param outcome the {@code outcome} tag of {@code idempotency_requests_total}
     */
    void refused(String outcome) {
        meters.count(outcome);
    }

    /** Renews every held lease once, as the renewer thread does every third of the lease; for tests. */
    void renewHeld() {
        renewer.renewHeld();
    }

    /** Stops renewing leases. */
    @Override
    public void close() {
        renewer.close();
    }
}
