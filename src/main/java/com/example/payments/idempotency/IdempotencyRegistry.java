package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The idempotency registry every authorization goes through (IETF draft-ietf-httpapi-idempotency-key-header): claims
 * a key before the authorizer runs, renews the lease while the request runs, stores the response on completion and
 * releases the key when the request fails or is cut off, so that a retry on a healthy replica can succeed.
 *
 * <p>It remembers which keys this process holds IN_FLIGHT, so that the shutdown sequence can release every key whose
 * request the drain cut off ({@link #releaseAllHeld}). Counts {@code idempotency_requests_total{outcome}} and
 * {@code idempotency_keys_released_total{reason}}.
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
        /** The drain timeout cut the request off during shutdown. */
        SHUTDOWN
    }

    private final IdempotencyStore store;
    private final Duration lease;
    private final Duration retention;
    private final String instanceId = UUID.randomUUID().toString();
    private final AtomicLong requestSequence = new AtomicLong();
    private final Map<String, String> held = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final MeterRegistry meters;
    private final Map<ReleaseReason, Counter> released = new EnumMap<>(ReleaseReason.class);

    private IdempotencyRegistry(IdempotencyStore store, Duration lease, Duration retention, MeterRegistry meters) {
        this.store = store;
        this.lease = lease;
        this.retention = retention;
        this.meters = meters;
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
     * @param store     the backend
     * @param lease     {@code idempotency.in-flight-lease}; renewed every third of it
     * @param retention {@code idempotency.retention}
     * @param meters    where the counters go
     * @return the registry
     */
    public static IdempotencyRegistry create(IdempotencyStore store, Duration lease, Duration retention,
                                             MeterRegistry meters) {
        return new IdempotencyRegistry(store, lease, retention, meters);
    }

    /**
     * Claims a key for a validated request. Validation failures never reach here, so they never take a key.
     *
     * @param merchantId  the merchant; keys are scoped per merchant
     * @param key         the idempotency key
     * @param fingerprint the request's fingerprint
     * @return the claim; an {@link Claim.Acquired} must be completed or released
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached
     */
    public Claim claim(String merchantId, IdempotencyKey key, String fingerprint) {
        String lookupKey = merchantId + ':' + key.value();
        String owner = instanceId + ':' + requestSequence.incrementAndGet();
        Claim claim;
        try {
            claim = store.claim(lookupKey, fingerprint, owner, lease);
        } catch (IdempotencyStore.UnavailableException e) {
            count("unavailable");
            throw e;
        }
        switch (claim) {
        case Claim.Acquired acquired -> {
            held.put(acquired.lookupKey(), acquired.owner());
            count("new");
        }
        case Claim.Replay replay -> count("replayed");
        case Claim.InFlight inFlight -> count("in_flight");
        case Claim.Mismatch mismatch -> count("mismatch");
        case Claim.Full full -> count("rejected_full");
        }
        return claim;
    }

    /**
     * Stores the response of a claimed key for replay.
     *
     * @param claim    the acquired claim
     * @param response the response sent to the client
     * @return {@code false} when the lease had been lost (the record expired or another process took it over)
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached; the key stays IN_FLIGHT until
     *                                               its lease expires
     */
    public boolean complete(Claim.Acquired claim, StoredResponse response) {
        // Stop renewing first: a renewal racing the completion would find the record completed and report a lease
        // as lost that was not.
        held.remove(claim.lookupKey(), claim.owner());
        boolean stored = store.complete(claim.lookupKey(), claim.owner(), response, retention);
        if (!stored) {
            LOGGER.log(Level.WARNING, "Idempotency lease lost before completion; the response was not stored");
        }
        return stored;
    }

    /**
     * Releases a claimed key without storing anything, so a retry runs the authorizer again.
     *
     * @param claim  the acquired claim
     * @param reason why, the {@code reason} tag of {@code idempotency_keys_released_total}
     * @return {@code true} when this call released it
     */
    public boolean release(Claim.Acquired claim, ReleaseReason reason) {
        if (!held.remove(claim.lookupKey(), claim.owner())) {
            return false;
        }
        try {
            if (store.release(claim.lookupKey(), claim.owner())) {
                released.get(reason).increment();
                return true;
            }
        } catch (IdempotencyStore.UnavailableException e) {
            LOGGER.log(Level.WARNING, "Could not release an idempotency key ({0}); it frees itself when its lease of "
                                      + "{1,number,#} ms expires", e.getMessage(), lease.toMillis());
        }
        return false;
    }

    /**
     * Releases every key this process still holds IN_FLIGHT, in parallel; called by the shutdown sequence after the
     * drain. Each release is bounded by the store's own timeout ({@code idempotency.redis.command-timeout}).
     *
     * @param reason reason to count them under
     * @return how many keys were released
     */
    public int releaseAllHeld(ReleaseReason reason) {
        // In parallel, like renewals: one remote call after another could outlast the shutdown's hard deadline when
        // the store answers slowly; together they take about one store timeout.
        AtomicInteger count = new AtomicInteger();
        try (ExecutorService releases = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Map.Entry<String, String> entry : Map.copyOf(held).entrySet()) {
                releases.execute(() -> {
                    if (release(new Claim.Acquired(entry.getKey(), entry.getValue()), reason)) {
                        count.incrementAndGet();
                    }
                });
            }
        }
        return count.get();
    }

    /**
     * Keys this process holds IN_FLIGHT right now.
     *
     * @return count
     */
    public int heldCount() {
        return held.size();
    }

    private void renewHeld() {
        // In parallel: against a remote store that answers slowly, renewing one key after another could take longer
        // than a lease, and leases of requests still running would expire.
        try (ExecutorService renewals = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Map.Entry<String, String> entry : held.entrySet()) {
                renewals.execute(() -> renew(entry.getKey(), entry.getValue()));
            }
        }
    }

    private void renew(String lookupKey, String owner) {
        try {
            if (!store.renew(lookupKey, owner, lease) && held.remove(lookupKey, owner)) {
                LOGGER.log(Level.WARNING, "Idempotency lease lost while the request was running");
            }
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Idempotency lease renewal failed: {0}", e.getMessage());
        }
    }

    private void count(String outcome) {
        meters.getOrCreate(Counter.builder("idempotency_requests")
                                   .tags(List.of(Tag.create("outcome", outcome)))
                                   .description("Authorization requests by idempotency outcome")).increment();
    }

    @Override
    public void close() {
        renewer.shutdownNow();
    }
}
