package com.example.payments.idempotency;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Renews the leases of the keys the registry holds while their requests run: every third of the lease
 * ({@code idempotency.in-flight-lease}), on a daemon thread {@code idempotency-lease-renewer}, each renewal in
 * parallel. A successful renewal moves the key's local lease deadline to its send time plus the lease; a renewal that
 * finds the lease gone marks the key lost, so that no work starts on it; a renewal that fails (store unavailable)
 * changes nothing, and the key keeps its local deadline.
 */
final class LeaseRenewer implements AutoCloseable {

    // The registry's logger: these lines belong to the registry's flow and keep the logger name they always had.
    private static final System.Logger LOGGER = System.getLogger(IdempotencyRegistry.class.getName());

    private final IdempotencyStore store;
    private final Duration lease;
    private final HeldKeys held;
    private final ScheduledExecutorService renewer;

    private LeaseRenewer(IdempotencyStore store, Duration lease, HeldKeys held) {
        this.store = store;
        this.lease = lease;
        this.held = held;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "idempotency-lease-renewer");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts renewing the held keys every third of the lease (at least every millisecond).
     *
     * @param store the backend
     * @param lease {@code idempotency.in-flight-lease}
     * @param held  the registry's held keys, read and updated concurrently
     * @return the running renewer; {@link #close()} stops it
     */
    static LeaseRenewer start(IdempotencyStore store, Duration lease, HeldKeys held) {
        LeaseRenewer renewer = new LeaseRenewer(store, lease, held);
        long period = Math.max(1, lease.toMillis() / 3);
        renewer.renewer.scheduleAtFixedRate(renewer::renewHeld, period, period, TimeUnit.MILLISECONDS);
        return renewer;
    }

    /** Renews every held lease once; the renewer thread runs this every third of the lease. */
    void renewHeld() {
        // In parallel: against a remote store that answers slowly, renewing one key after another could take longer
        // than a lease, and leases of requests still running would expire.
        try (ExecutorService renewals = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Map.Entry<Claim.Acquired, HeldKeys.Hold> entry : held.entries()) {
                if (entry.getValue().state == HeldKeys.State.HELD) {
                    renewals.execute(() -> renew(entry.getKey(), entry.getValue()));
                }
            }
        }
    }

    private void renew(Claim.Acquired claim, HeldKeys.Hold hold) {
        long sent = System.nanoTime();
        try {
            if (store.renew(claim.lookupKey(), claim.token(), lease)) {
                hold.leaseDeadlineNanos = sent + lease.toNanos();
            } else if (hold.state == HeldKeys.State.HELD) {
                hold.state = HeldKeys.State.LOST;
                LOGGER.log(Level.WARNING, "Idempotency lease lost while the request was running");
            }
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "Idempotency lease renewal failed: {0}", e.getMessage());
        }
    }

    /** Stops renewing; renewals under way are interrupted. */
    @Override
    public void close() {
        renewer.shutdownNow();
    }
}
