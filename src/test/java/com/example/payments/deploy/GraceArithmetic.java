package com.example.payments.deploy;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.example.payments.testing.EnvironmentFiles;

/**
 * The grace arithmetic for one environment, both sides read from what the overlay renders: the
 * Deployment's {@code terminationGracePeriodSeconds} and preStop sleep, and the {@code shutdown.*} values of the
 * config file its ConfigMap mounts.
 * <ol>
 *     <li>{@code terminationGracePeriodSeconds > preStop + pre-drain-delay + drain-timeout + cleanup-timeout +
 *     metrics-linger + margin}: a graceful shutdown that uses every bound still ends before SIGKILL;</li>
 *     <li>{@code preStop + hard-deadline < terminationGracePeriodSeconds}: a hung shutdown halts itself (exit 1, a
 *     log line naming the phase) before the kubelet kills it without a word.</li>
 * </ol>
 * The kubelet starts the grace period at deletion and runs the preStop sleep inside it; the service's clocks start at
 * SIGTERM, after the sleep.
 *
 * @param environment                   for messages, e.g. {@code prod}
 * @param terminationGracePeriodSeconds the pod's grace period, seconds
 * @param preStopSeconds                the preStop sleep, seconds
 * @param preDrainDelay                 {@code shutdown.pre-drain-delay}
 * @param drainTimeout                  {@code shutdown.drain-timeout}
 * @param cleanupTimeout                {@code shutdown.cleanup-timeout}
 * @param metricsLinger                 {@code shutdown.metrics-linger}
 * @param hardDeadline                  {@code shutdown.hard-deadline}
 */
record GraceArithmetic(String environment, long terminationGracePeriodSeconds, long preStopSeconds,
                       Duration preDrainDelay, Duration drainTimeout, Duration cleanupTimeout, Duration metricsLinger,
                       Duration hardDeadline) {

    /**
     * Head room between the longest graceful shutdown and SIGKILL: 5 s, for the health listener's close, the log
     * flush, JVM exit, and a kubelet that sends SIGTERM a little after the sleep ends.
     */
    static final Duration MARGIN = Duration.ofSeconds(5);

    /**
     * Reads both sides from a rendered overlay: the Deployment's grace period and preStop sleep, and the
     * {@code shutdown.*} values of the config file its ConfigMap mounts (defaults from {@code application.yaml}).
     *
     * @param environment for messages
     * @param overlay     rendered overlay
     * @param config      the configuration its pods run with
     * @return the arithmetic
     */
    static GraceArithmetic of(String environment, RenderedOverlay overlay, EnvironmentConfig config) {
        Long grace = overlay.deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        if (grace == null) {
            throw new AssertionError(environment + ": terminationGracePeriodSeconds is not pinned (the default 30 s "
                                     + "would apply unseen); set it in the kustomization.yaml of "
                                     + EnvironmentFiles.directories(environment));
        }
        return new GraceArithmetic(environment, grace, preStopSeconds(environment, overlay),
                                   config.duration("shutdown.pre-drain-delay"), config.duration("shutdown.drain-timeout"),
                                   config.duration("shutdown.cleanup-timeout"), config.duration("shutdown.metrics-linger"),
                                   config.duration("shutdown.hard-deadline"));
    }

    /**
     * The native preStop sleep of the application container.
     *
     * @param environment for messages
     * @param overlay     rendered overlay
     * @return seconds
     */
    static long preStopSeconds(String environment, RenderedOverlay overlay) {
        var lifecycle = overlay.container().getLifecycle();
        if (lifecycle == null || lifecycle.getPreStop() == null || lifecycle.getPreStop().getSleep() == null) {
            throw new AssertionError(environment + ": the container has no lifecycle.preStop.sleep (Kubernetes >= 1.30)");
        }
        return lifecycle.getPreStop().getSleep().getSeconds();
    }

    /**
     * The broken inequalities, each with its arithmetic, e.g. {@code terminationGracePeriodSeconds 45 must exceed
     * preStop 5 + pre-drain 5 + drain 40 + cleanup 3 + linger 6 + margin 5 = 64}.
     *
     * @return messages; empty when both inequalities hold
     */
    List<String> violations() {
        List<String> violations = new ArrayList<>();
        if (grace().compareTo(gracefulTotal()) <= 0) {
            violations.add("terminationGracePeriodSeconds " + terminationGracePeriodSeconds + " must exceed "
                           + gracefulSum() + " = " + seconds(gracefulTotal()));
        }
        if (preStop().plus(hardDeadline).compareTo(grace()) >= 0) {
            violations.add(hardDeadlineSum() + " = " + seconds(preStop().plus(hardDeadline))
                           + " must be less than terminationGracePeriodSeconds " + terminationGracePeriodSeconds);
        }
        return violations;
    }

    /**
     * Fails with every broken inequality and its arithmetic.
     *
     * @throws AssertionError naming the environment and the arithmetic
     */
    void check() {
        List<String> violations = violations();
        if (!violations.isEmpty()) {
            throw new AssertionError("Grace arithmetic of " + environment + " is broken: "
                                     + String.join("; ", violations)
                                     + ". Fix the shutdown.* values of " + EnvironmentFiles.files(environment)
                                     + " or the grace period beside them in the kustomization.yaml of "
                                     + EnvironmentFiles.directories(environment));
        }
    }

    /**
     * Both inequalities with their numbers, as the grace table of docs/deploying.md shows them.
     *
     * @return e.g. {@code preStop 5 + pre-drain 5 + ... = 39 < 45; preStop 5 + hard-deadline 35 = 40 < 45}
     */
    String summary() {
        return gracefulSum() + " = " + seconds(gracefulTotal()) + " < " + terminationGracePeriodSeconds + "; "
               + hardDeadlineSum() + " = " + seconds(preStop().plus(hardDeadline)) + " < "
               + terminationGracePeriodSeconds;
    }

    /**
     * This environment's row of the grace table in docs/deploying.md.
     *
     * @return e.g. {@code | prod | 5 | 5 | 15 | 3 | 6 | 5 | 39 | 35 | 40 | **45** |}
     */
    String tableRow() {
        return "| " + String.join(" | ", environment, String.valueOf(preStopSeconds), seconds(preDrainDelay),
                                  seconds(drainTimeout), seconds(cleanupTimeout), seconds(metricsLinger),
                                  seconds(MARGIN), seconds(gracefulTotal()), seconds(hardDeadline),
                                  seconds(preStop().plus(hardDeadline)), "**" + terminationGracePeriodSeconds + "**")
               + " |";
    }

    private Duration gracefulTotal() {
        return preStop().plus(preDrainDelay).plus(drainTimeout).plus(cleanupTimeout).plus(metricsLinger).plus(MARGIN);
    }

    private String gracefulSum() {
        return "preStop " + preStopSeconds + " + pre-drain " + seconds(preDrainDelay) + " + drain "
               + seconds(drainTimeout) + " + cleanup " + seconds(cleanupTimeout) + " + linger "
               + seconds(metricsLinger) + " + margin " + seconds(MARGIN);
    }

    private String hardDeadlineSum() {
        return "preStop " + preStopSeconds + " + hard-deadline " + seconds(hardDeadline);
    }

    private Duration grace() {
        return Duration.ofSeconds(terminationGracePeriodSeconds);
    }

    private Duration preStop() {
        return Duration.ofSeconds(preStopSeconds);
    }

    /** Seconds without trailing zeros: {@code PT0.5S} is {@code 0.5}, {@code PT15S} is {@code 15}. */
    private static String seconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString();
    }
}
