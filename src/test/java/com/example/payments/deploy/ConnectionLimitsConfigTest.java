package com.example.payments.deploy;

import java.time.Duration;

import com.example.payments.config.ConfigValues;
import com.example.payments.http.HttpSettings;

import io.fabric8.kubernetes.api.model.Quantity;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every environment runs with bounded connections (docs/hostile-clients.md): both listeners capped,
 * the caps' heap within a tenth of the pod's heap, idle connections and slow requests timed out, and the liveness
 * progress window longer than the time an idle connection may hold a slot.
 */
class ConnectionLimitsConfigTest {

    /** Heap of one open connection, measured with 900 keep-alive connections on JDK 25 (docs/hostile-clients.md). */
    private static final long HEAP_PER_CONNECTION = 21 * 1024;

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void everyEnvironmentBoundsItsConnections(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        var config = EnvironmentConfig.of(overlay).config();
        HttpSettings http = HttpSettings.create(ConfigValues.create(config));
        Quantity memory = overlay.container().getResources().getLimits().get("memory");
        long heap = Quantity.getAmountInBytes(memory).longValue() * 3 / 4;
        long connectionsHeap = (long) (http.business().maxTcpConnections() + http.health().maxTcpConnections())
                               * HEAP_PER_CONNECTION;

        assertTrue(connectionsHeap <= heap / 10, () -> environment + ": " + http.business().maxTcpConnections()
                + " + " + http.health().maxTcpConnections() + " connections take ~" + connectionsHeap / 1024 / 1024
                + " MiB of heap, more than a tenth of the " + heap / 1024 / 1024 + " MiB heap");
        assertTrue(http.health().maxTcpConnections() <= 64, () -> environment + ": the health listener serves probes "
                + "and scrapes only");
        assertTrue(atMost(http.business().longestIdle(), Duration.ofMinutes(2))
                   && atMost(http.health().longestIdle(), Duration.ofSeconds(30)),
                   () -> environment + ": idle connections must be closed within minutes, not Helidon's 5 min + 2 min");
        assertTrue(atMost(http.headerTimeout(), Duration.ofSeconds(30))
                   && atMost(http.bodyTimeout(), Duration.ofSeconds(30)),
                   () -> environment + ": a slow client must not hold a connection or a permit for long");
        assertTrue(config.get("health.liveness.progress-window").asString().map(Duration::parse)
                           .orElse(Duration.ofSeconds(90)).compareTo(http.business().longestIdle()) > 0,
                   () -> environment + ": the progress window must outlast an idle connection's slot");
    }

    private static boolean atMost(Duration value, Duration limit) {
        return value.compareTo(limit) <= 0;
    }
}
