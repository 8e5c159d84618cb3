package com.example.payments.deploy;

import java.time.Duration;
import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Probe;
import io.helidon.config.Config;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three probe blocks of every rendered overlay against the documented budgets of {@link ProbeBudgets} and the
 * configuration the pods run with. One shared block is how readiness ended up too slow and startup
 * too impatient without anyone noticing.
 */
class ProbeSettingsTest {

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void everyProbeAsksTheHealthPortOnItsOwnPath(String environment) {
        Container container = RenderedOverlay.of(environment).container();
        List<Probe> probes = List.of(container.getStartupProbe(), container.getReadinessProbe(),
                                     container.getLivenessProbe());
        List<String> expected = List.of("/health/startup", "/health/ready", "/health/live");

        for (int i = 0; i < probes.size(); i++) {
            Probe probe = probes.get(i);
            assertNotNull(probe, () -> environment + ": missing probe for " + expected);
            assertEquals("health", probe.getHttpGet().getPort().getStrVal(),
                         () -> environment + ": probes ask the named port health, never the business port");
            assertEquals(expected.get(i), probe.getHttpGet().getPath());
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void livenessIsMoreTolerantThanReadinessAndNeverOnItsPath(String environment) {
        Container container = RenderedOverlay.of(environment).container();
        Probe liveness = container.getLivenessProbe();
        Probe readiness = container.getReadinessProbe();

        assertNotEquals(readiness.getHttpGet().getPath(), liveness.getHttpGet().getPath());
        assertNotEquals("/health", liveness.getHttpGet().getPath(), "/health is the legacy alias of readiness");
        assertTrue(detection(liveness).compareTo(detection(readiness)) > 0,
                   () -> environment + ": liveness detection " + detection(liveness).toSeconds() + " s must be "
                         + "longer than readiness detection " + detection(readiness).toSeconds() + " s");
        assertTrue(liveness.getFailureThreshold() >= 3 && liveness.getFailureThreshold() >= readiness.getFailureThreshold(),
                   () -> environment + ": liveness needs failureThreshold >= 3: one slow answer must not restart a pod");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void startupProbeWaitsAtLeastTheBootBudget(String environment) {
        Probe startup = RenderedOverlay.of(environment).container().getStartupProbe();
        Duration budget = Duration.ofSeconds((long) startup.getPeriodSeconds() * startup.getFailureThreshold());

        assertTrue(budget.compareTo(ProbeBudgets.BOOT_BUDGET) >= 0,
                   () -> environment + ": startup budget periodSeconds " + startup.getPeriodSeconds()
                         + " x failureThreshold " + startup.getFailureThreshold() + " = " + budget.toSeconds()
                         + " s must be >= the boot budget of " + ProbeBudgets.BOOT_BUDGET.toSeconds() + " s");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void theWarmUpEndsInsideTheBootBudget(String environment) {
        Config config = EnvironmentConfig.of(RenderedOverlay.of(environment)).config();
        Duration warmUp = Duration.parse(config.get("warm-up.timeout").asString().get());

        assertTrue(warmUp.plus(ProbeBudgets.BOOT_WITHOUT_WARM_UP).compareTo(ProbeBudgets.BOOT_BUDGET) <= 0,
                   () -> environment + ": warm-up.timeout " + warmUp + " + " + ProbeBudgets.BOOT_WITHOUT_WARM_UP
                         + " of boot without it must fit the boot budget of " + ProbeBudgets.BOOT_BUDGET
                         + " (startup waits for the warm-up)");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void readinessTakesAFailingPodOutOfRotationWithinTheBound(String environment) {
        Probe readiness = RenderedOverlay.of(environment).container().getReadinessProbe();

        assertTrue(detection(readiness).compareTo(ProbeBudgets.READINESS_DETECTION_BOUND) <= 0,
                   () -> environment + ": readiness detection periodSeconds " + readiness.getPeriodSeconds()
                         + " x failureThreshold " + readiness.getFailureThreshold() + " + timeoutSeconds "
                         + readiness.getTimeoutSeconds() + " = " + detection(readiness).toSeconds() + " s must be <= "
                         + ProbeBudgets.READINESS_DETECTION_BOUND.toSeconds() + " s");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void readinessTimeoutOutlastsTheDependencyChecks(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        Duration checkTimeout = EnvironmentConfig.of(overlay).duration("health.readiness.check-timeout");
        Duration probeTimeout = Duration.ofSeconds(overlay.container().getReadinessProbe().getTimeoutSeconds());

        assertTrue(probeTimeout.compareTo(checkTimeout) > 0,
                   () -> environment + ": readiness timeoutSeconds " + probeTimeout.toSeconds() + " must exceed "
                         + "health.readiness.check-timeout " + checkTimeout + ", or a slow dependency shows up as a "
                         + "probe timeout instead of a 503 naming it");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void circuitBreakerTripsOnlyAfterARedisFailoverCouldHaveEnded(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        long threshold = Long.parseLong(EnvironmentConfig.of(overlay).string("health.circuit-breaker.threshold"));
        int period = overlay.container().getReadinessProbe().getPeriodSeconds();
        Duration trip = Duration.ofSeconds(threshold * period);

        assertTrue(threshold == 0 || trip.compareTo(ProbeBudgets.REDIS_FAILOVER) > 0,
                   () -> environment + ": breaker trip time health.circuit-breaker.threshold " + threshold
                         + " x readiness periodSeconds " + period + " = " + trip.toSeconds() + " s must be longer "
                         + "than a Redis failover (" + ProbeBudgets.REDIS_FAILOVER.toSeconds() + " s), or the whole "
                         + "fleet restarts just as Redis comes back");
    }

    /** Worst case from the first failed answer to the kubelet acting: periodSeconds x failureThreshold + timeout. */
    private static Duration detection(Probe probe) {
        return Duration.ofSeconds((long) probe.getPeriodSeconds() * probe.getFailureThreshold()
                                  + probe.getTimeoutSeconds());
    }
}
