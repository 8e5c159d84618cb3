package com.example.payments.health;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The three probe contracts as pure functions of flags (Kubernetes probe semantics: liveness failure restarts the
 * container, readiness failure removes it from Service endpoints, startup gates the other two while booting).
 *
 * <p>The order of checks is part of the contract: cheapest first, and the only I/O (dependency checks) last and
 * only in readiness. Liveness never touches a dependency.
 */
public final class Probes {

    /** The error a probe reports when the loopback prober cannot reach the business port and nothing progresses. */
    public static final String APP_SERVER_NOT_RESPONDING = "app server not responding";
    /**
     * The error readiness reports when the business port sheds the loopback probe, or does not answer it in time while
     * it still completes other requests: busy, not wedged.
     */
    public static final String APP_SERVER_SATURATED = "app server saturated";

    private Probes() {
    }

    /**
     * Liveness: is this process wedged? Flags only, no I/O.
     *
     * @param draining         shutdown has started
     * @param breakerThreshold {@code health.circuit-breaker.threshold}, 0 disables
     * @param readinessFailures consecutive failing readiness requests
     * @param port             what the last loopback probe saw
     * @param progressing      the business listener wrote a response within {@code health.liveness.progress-window}
     * @param workerErrors     stale worker heartbeats, empty when all are fresh
     * @return 200 {@code draining} while draining (a draining process is healthy: failing here would get it killed
     *         mid-drain); 503 {@code faulted} when the breaker tripped; 503 {@code unhealthy} naming what failed: the
     *         app server only when the probe got no answer and nothing progressed (a saturated listener that still
     *         completes requests costs readiness, never liveness: a restart would cut capacity when it is needed
     *         most), and stale workers; else 200 {@code ok}
     */
    public static ProbeResult liveness(boolean draining, int breakerThreshold, int readinessFailures,
                                       PortStatus port, boolean progressing, List<String> workerErrors) {
        if (draining) {
            return ProbeResult.ok("draining");
        }
        if (breakerThreshold > 0 && readinessFailures >= breakerThreshold) {
            return ProbeResult.unavailable("faulted");
        }
        List<String> errors = new ArrayList<>();
        if (!port.answered() && !progressing) {
            errors.add(APP_SERVER_NOT_RESPONDING);
        }
        errors.addAll(workerErrors);
        if (!errors.isEmpty()) {
            return new ProbeResult(503, new ProbeResult.Body("unhealthy", null, List.copyOf(errors)),
                                   ProbeResult.BreakerEffect.NONE);
        }
        return ProbeResult.ok("ok");
    }

    /**
     * Readiness: should traffic come here?
     *
     * @param draining           shutdown has started
     * @param startupComplete    boot finished
     * @param port               what the last loopback probe saw
     * @param progressing        the business listener wrote a response within {@code health.liveness.progress-window}
     * @param dependencyFailures runs the required dependency checks (parallel, bounded) and returns one
     *                           {@code "name: why"} per failed dependency; called only when every flag passed
     * @return 503 {@code draining} (with {@code "draining":true}, checks not run, counter untouched); 503
     *         {@code starting} (counter untouched); 503 {@code unhealthy} "app server saturated" when the probe was shed
     *         or got no answer while requests complete (counter untouched: saturation must not trip the breaker into a
     *         restart); 503 {@code unhealthy} with errors (counts a breaker failure); else 200 {@code ok} (resets the
     *         counter)
     */
    public static ProbeResult readiness(boolean draining, boolean startupComplete, PortStatus port,
                                        boolean progressing, Supplier<List<String>> dependencyFailures) {
        if (draining) {
            return new ProbeResult(503, new ProbeResult.Body("draining", true, null), ProbeResult.BreakerEffect.NONE);
        }
        if (!startupComplete) {
            return ProbeResult.unavailable("starting");
        }
        if (port == PortStatus.SATURATED || port == PortStatus.NOT_RESPONDING && progressing) {
            return new ProbeResult(503, new ProbeResult.Body("unhealthy", null, List.of(APP_SERVER_SATURATED)),
                                   ProbeResult.BreakerEffect.NONE);
        }
        if (port == PortStatus.NOT_RESPONDING) {
            return unhealthy(List.of(APP_SERVER_NOT_RESPONDING));
        }
        List<String> failures = dependencyFailures.get();
        if (!failures.isEmpty()) {
            return unhealthy(failures);
        }
        return ProbeResult.ok("ok").withBreaker(ProbeResult.BreakerEffect.RESET);
    }

    /**
     * Startup: has boot finished?
     *
     * @param startupComplete routes registered, dependencies wired and the first loopback probe succeeded
     * @return 200 {@code started} or 503 {@code starting}
     */
    public static ProbeResult startup(boolean startupComplete) {
        return startupComplete ? ProbeResult.ok("started") : ProbeResult.unavailable("starting");
    }

    private static ProbeResult unhealthy(List<String> errors) {
        return new ProbeResult(503, new ProbeResult.Body("unhealthy", null, List.copyOf(errors)),
                               ProbeResult.BreakerEffect.FAILURE);
    }
}
