package com.example.payments;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.example.payments.authorization.AuthorizationService;
import com.example.payments.authorization.Expiry;
import com.example.payments.authorization.Reconciler;
import com.example.payments.health.Heartbeat;
import com.example.payments.health.WorkerWatchdog;
import com.example.payments.lifecycle.PeriodicWorker;

/**
 * Starts the background workers of the process, each a {@link PeriodicWorker} whose heartbeat the liveness watchdog
 * watches: the idempotency sweeper (only for a store that needs one), authorization expiry and the unknown-outcome
 * reconciler. The shutdown sequence stops them in its cleanup phase, before the resources they use close.
 */
final class BackgroundWorkers {

    private static final Duration SWEEP_INTERVAL = Duration.ofSeconds(1);
    private static final Duration SWEEPER_STALE_AFTER = Duration.ofSeconds(10);
    // The expiry worker: a run claims batches of 100 authorizations (for 30 s + 2 x authorizer.timeout) and expires
    // 4 at a time, each two store writes and a bounded acquirer call.
    private static final Duration EXPIRY_INTERVAL = Duration.ofSeconds(1);
    private static final int EXPIRY_BATCH = 100;
    private static final int EXPIRY_PARALLELISM = 4;
    private static final Duration EXPIRY_LEASE = Duration.ofSeconds(30);
    // The unknown-outcome reconciler: every second, at most 100 outcomes per run.
    private static final Duration RECONCILE_INTERVAL = Duration.ofSeconds(1);
    private static final int RECONCILE_BATCH = 100;

    private BackgroundWorkers() {
    }

    /**
     * Starts the workers: the sweeper every 1 s (stale after 10 s without a beat), expiry every 1 s (stale after
     * 10 s + 2 x {@code authorizer.timeout}), the reconciler every 1 s (stale after 10 s + 4 x
     * {@code authorizer.timeout}).
     *
     * @param settings   validated settings ({@code authorizer.*})
     * @param components the stores the workers sweep, expire and reconcile, the idempotency registry (its claims
     *                   decide between the reconciler and a retry), the API (its bounded authorizer sends the
     *                   expiry's voids and the reconciler's reversals), the watchdog and the metrics registry
     * @return the running workers, in start order
     */
    static List<PeriodicWorker> start(AppSettings settings, Components components) {
        Backends backends = components.backends();
        AuthorizationService authorizations = components.authorizations();
        WorkerWatchdog watchdog = components.watchdog();
        List<PeriodicWorker> workers = new ArrayList<>();
        backends.sweep().ifPresent(sweep -> {
            Heartbeat sweeperHeartbeat = Heartbeat.create("idempotency-sweeper", SWEEPER_STALE_AFTER);
            watchdog.watch(sweeperHeartbeat);
            workers.add(PeriodicWorker.start(sweeperHeartbeat, SWEEP_INTERVAL, sweep));
        });

        // It beats after each authorization expired: its staleness threshold covers acquirer calls that time out.
        Duration authorizerTimeout = settings.authorizer().timeout();
        Heartbeat expiryHeartbeat = Heartbeat.create("authorization-expiry", SWEEPER_STALE_AFTER.plus(
                authorizerTimeout.multipliedBy(2)));
        watchdog.watch(expiryHeartbeat);
        Expiry.Settings expiry = new Expiry.Settings(EXPIRY_BATCH, EXPIRY_PARALLELISM,
                                                     EXPIRY_LEASE.plus(authorizerTimeout.multipliedBy(2)));
        workers.add(PeriodicWorker.start(expiryHeartbeat, EXPIRY_INTERVAL, Expiry.create(backends.authorizations(),
                authorizations, Clock.systemUTC(), expiry, expiryHeartbeat::touch)));
        // The reconciler: a run resolves at most 100 unknown outcomes, each a claim, a few bounded reversal sends
        // and two store writes; its staleness threshold covers a run whose sends all time out.
        Heartbeat reconcilerHeartbeat = Heartbeat.create("unknown-outcome-reconciler", SWEEPER_STALE_AFTER.plus(
                settings.authorizer().timeout().multipliedBy(4)));
        watchdog.watch(reconcilerHeartbeat);
        workers.add(PeriodicWorker.start(reconcilerHeartbeat, RECONCILE_INTERVAL, Reconciler.create(
                backends.outcomes(), components.registry(), backends.bindings(), backends.authorizations(),
                authorizations, settings.authorizer(), Clock.systemUTC(), RECONCILE_BATCH, components.meters())));
        return workers;
    }
}
