package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.example.payments.http.RequestIds;
import com.example.payments.observability.Tracing;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;

/**
 * The idempotency registry every idempotent operation goes through (IETF draft-ietf-httpapi-idempotency-key-header):
 * claims a key (or recovers its recorded decision), renews the lease while the request runs, records the decision and
 * completes the key, and releases the key when there is no decision, so that a retry can run.
 *
 * <p>It remembers which keys this process holds, each with its fencing token and a monotonic local lease deadline
 * (when the last successful claim or renewal was sent, plus the lease): {@link #leaseCovers} tells, without a round
 * trip, whether the lease still covers a call. A key stays held until its release succeeded, so whatever a cut-off
 * request could not release is released by the shutdown's key-release phase ({@link #releaseAllHeld}). Store writes
 * of a store that blocks ({@link IdempotencyStore#blocks()}) run on threads of the registry, never on the request
 * thread: a request interrupted by the end of the drain still records or releases its key. Counts
 * {@code idempotency_requests_total{outcome}},
 * {@code idempotency_keys_released_total{reason}} and {@code idempotency_quota_total{outcome}} ({@code allowed},
 * {@code in_flight_exceeded}, {@code records_exceeded}: each claim that took a key anew, or that the merchant's
 * {@link Quota} refused).
 *
 * <p>Size: claims, leases, renewals and releases all work on the one table of held keys.
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

    private enum State { HELD, LOST, DECIDED }

    private static final class Hold {
        private volatile long leaseDeadlineNanos;
        private volatile State state = State.HELD;

        private Hold(long leaseDeadlineNanos) {
            this.leaseDeadlineNanos = leaseDeadlineNanos;
        }
    }

    private final IdempotencyStore store;
    private final boolean storeBlocks;
    private final Duration lease;
    private final Duration retention;
    private final Duration recordBound;
    private final Quota quota;
    private final Map<Claim.Acquired, Hold> held = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final ExecutorService storeCalls = Executors.newVirtualThreadPerTaskExecutor();
    private final MeterRegistry meters;
    private final Map<ReleaseReason, Counter> released = new EnumMap<>(ReleaseReason.class);
    private final AtomicLong releases = new AtomicLong();
    // Counters by outcome, created at first use and held: a registry lookup per request builds a meter id each time.
    private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
    private final Map<String, Counter> quotaCounters = new ConcurrentHashMap<>();

    private IdempotencyRegistry(IdempotencyStore store, Duration lease, Duration retention, Duration recordBound,
                                Quota quota, MeterRegistry meters) {
        this.store = store;
        this.storeBlocks = store.blocks();
        this.lease = lease;
        this.retention = retention;
        this.recordBound = recordBound;
        this.quota = quota;
        this.meters = meters;
        for (String outcome : List.of("allowed", "in_flight_exceeded", "records_exceeded")) {
            quotaCounter(outcome);
        }
        for (ReleaseReason reason : ReleaseReason.values()) {
            released.put(reason, meters.getOrCreate(Counter.builder("idempotency_keys_released")
                    .tags(List.of(Tag.create("reason", reason.name().toLowerCase(Locale.ROOT))))
                    .description("IN_FLIGHT idempotency keys released so that a retry can run")));
        }
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "idempotency-lease-renewer");
            thread.setDaemon(true);
            return thread;
        });
        long period = Math.max(1, lease.toMillis() / 3);
        renewer.scheduleAtFixedRate(this::renewHeld, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Creates the registry and starts renewing leases.
     *
     * @param store       the backend
     * @param lease       {@code idempotency.in-flight-lease}; renewed every third of it
     * @param retention   {@code idempotency.retention}
     * @param recordBound longest the store takes to record a decision ({@code IdempotencySettings.bounds()}); a lease
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
            claim = offRequestThread("claim", () -> store.claim(lookupKey, identities, lease, quota));
        } catch (IdempotencyStore.UnavailableException e) {
            count("unavailable");
            span.setAttribute(Tracing.IDEMPOTENCY_OUTCOME, "unavailable").setStatus(StatusCode.ERROR).end();
            throw e;
        }
        String outcome = switch (claim) {
        case Claim.Acquired acquired -> {
            held.put(acquired, new Hold(sent + lease.toNanos()));
            quotaCounter("allowed").increment();
            yield "new";
        }
        case Claim.Replay replay -> replay.recovered() ? "recovered" : "replayed";
        case Claim.InFlight inFlight -> "in_flight";
        case Claim.Mismatch mismatch -> "mismatch";
        case Claim.Full full -> "rejected_full";
        case Claim.OverQuota over -> {
            quotaCounter(over.limit() == Quota.Limit.IN_FLIGHT ? "in_flight_exceeded" : "records_exceeded")
                    .increment();
            yield "rejected_quota";
        }
        };
        count(outcome);
        span.setAttribute(Tracing.IDEMPOTENCY_OUTCOME, outcome).end();
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
        Hold hold = held.get(claim);
        return hold != null && hold.state == State.HELD
               && hold.leaseDeadlineNanos - System.nanoTime() > call.plus(recordBound).toNanos();
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
        Hold hold = held.get(claim);
        if (hold != null) {
            // Stop renewing first: a renewal racing the completion would find the record completed and report a
            // lease as lost that was not.
            hold.state = State.DECIDED;
        }
        try {
            Recorded recorded = offRequestThread("record", () -> store.recordAndComplete(claim.lookupKey(), identity,
                                                                               claim.token(), decision, retention));
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
        Hold hold = held.get(claim);
        if (hold == null || hold.state == State.DECIDED) {
            return false;
        }
        // No work may start on a key being released.
        hold.state = State.LOST;
        boolean done;
        try {
            done = offRequestThread("release", () -> store.release(claim.lookupKey(), claim.token()));
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Could not release an idempotency key ({0}); the shutdown retries it, and it "
                                      + "frees itself when its lease of {1,number,#} ms expires", e.getMessage(),
                       lease.toMillis());
            return false;
        }
        // Released, or no longer ours (lapsed, taken over): nothing left to release either way.
        if (held.remove(claim) != null && done) {
            released.get(reason).increment();
            releases.incrementAndGet();
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
        // In parallel, like renewals: one remote call after another could outlast the shutdown's hard deadline when
        // the store answers slowly; together they take about one store timeout.
        AtomicInteger count = new AtomicInteger();
        try (ExecutorService releasing = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Claim.Acquired claim : List.copyOf(held.keySet())) {
                releasing.execute(() -> {
                    if (release(claim, reason)) {
                        count.incrementAndGet();
                    }
                });
            }
        }
        return count.get();
    }

    /**
     * Looks up a recorded decision, for {@code GET} of the resource.
     *
     * @param key where it is recorded
     * @return the decision, or empty when unknown or past retention
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached
     */
    public Optional<Decision> findDecision(DecisionKey key) {
        Span span = storeSpan("find-decision");
        try (Scope ignored = span.makeCurrent()) {
            return store.findDecision(key);
        } catch (IdempotencyStore.UnavailableException e) {
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            span.end();
        }
    }

    /**
     * Keys this process holds without a decision right now.
     *
     * @return count
     */
    public int heldCount() {
        return (int) held.values().stream().filter(hold -> hold.state != State.DECIDED).count();
    }

    /**
     * Keys released since this registry started, by every path and for every reason: the shutdown summary reports
     * the difference between the signal and its end.
     *
     * @return count
     */
    public long releasedCount() {
        return releases.get();
    }

    /**
     * Counts a request refused before its claim, e.g. {@code draining}.
     *
     * @param outcome the {@code outcome} tag of {@code idempotency_requests_total}
     */
    void refused(String outcome) {
        count(outcome);
    }

    /** Renews every held lease once; the renewer thread runs this every third of the lease. */
    void renewHeld() {
        // In parallel: against a remote store that answers slowly, renewing one key after another could take longer
        // than a lease, and leases of requests still running would expire.
        try (ExecutorService renewals = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Map.Entry<Claim.Acquired, Hold> entry : held.entrySet()) {
                if (entry.getValue().state == State.HELD) {
                    renewals.execute(() -> renew(entry.getKey(), entry.getValue()));
                }
            }
        }
    }

    private void renew(Claim.Acquired claim, Hold hold) {
        long sent = System.nanoTime();
        try {
            if (store.renew(claim.lookupKey(), claim.token(), lease)) {
                hold.leaseDeadlineNanos = sent + lease.toNanos();
            } else if (hold.state == State.HELD) {
                hold.state = State.LOST;
                LOGGER.log(Level.WARNING, "Idempotency lease lost while the request was running");
            }
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Idempotency lease renewal failed: {0}", e.getMessage());
        }
    }

    // A store that does not block (in this process's memory) does not notice an interrupt either: its calls run on
    // the request thread. Every other one (a client library over the network) gets the hop below.
    //
    // A store call bounded by the store's own timeouts, run on a virtual thread of its own and waited for without
    // giving in to interrupts: an interrupted thread makes Lettuce fail at once ("Command interrupted"), and a key
    // whose release failed that way would stay IN_FLIGHT for a whole lease.
    private <T> T offRequestThread(String operation, Callable<T> call) {
        Span span = storeSpan(operation);
        try (Scope ignored = span.makeCurrent()) {
            return offRequestThread(call);
        } catch (RuntimeException e) {
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            span.end();
        }
    }

    // A span per store call, named by operation only: its arguments hold keys and merchant ids, never put in spans.
    private static Span storeSpan(String operation) {
        return Tracing.tracer().spanBuilder("idempotency.store " + operation).setSpanKind(SpanKind.CLIENT)
                .setAttribute(Tracing.STORE_OPERATION, operation).startSpan();
    }

    private <T> T offRequestThread(Callable<T> call) {
        if (!storeBlocks) {
            return callHere(call);
        }
        Future<T> future;
        try {
            future = storeCalls.submit(RequestIds.propagate(call));
        } catch (RejectedExecutionException e) {
            return callHere(call);
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static <T> T callHere(Callable<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private Counter quotaCounter(String outcome) {
        return quotaCounters.computeIfAbsent(outcome, o -> meters.getOrCreate(
                Counter.builder("idempotency_quota")
                        .tags(List.of(Tag.create("outcome", o)))
                        .description("New idempotency claims by merchant-quota outcome")));
    }

    private void count(String outcome) {
        requestCounters.computeIfAbsent(outcome, o -> meters.getOrCreate(
                Counter.builder("idempotency_requests")
                        .tags(List.of(Tag.create("outcome", o)))
                        .description("Requests by idempotency outcome"))).increment();
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        storeCalls.shutdown();
    }
}
