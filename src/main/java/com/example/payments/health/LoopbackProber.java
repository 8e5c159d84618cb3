package com.example.payments.health;

import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;

/**
 * Proves the business port serves: every {@code health.prober.interval} it GETs {@code /ping} on the business port
 * over a fresh TCP connection and writes the outcome to {@link HealthState#probed(PortStatus)}, which it alone writes.
 *
 * <p>Why a fresh connection: a reused keep-alive connection keeps succeeding while the accept loop is broken and no
 * new client can connect. Why start pessimistic and probe at once: until one real round trip succeeded, nothing has
 * shown the pod can serve, and readiness must not say otherwise. Invalid settings are rejected at startup by
 * {@link HealthSettings}: a prober that silently gave up would leave the pod never-ready.
 *
 * <p>Logs the first failure, every 20th after it, and the recovery with how long the port was unhealthy; at a 500 ms
 * interval, one line per failure would bury the signal.
 */
public final class LoopbackProber implements AutoCloseable {

    private static final System.Logger LOGGER = System.getLogger(LoopbackProber.class.getName());

    private final HealthState state;
    private final URI target;
    private final Duration interval;
    private final WebClient client;
    private final ScheduledExecutorService scheduler;
    private int consecutiveFailures;
    private long unhealthySinceNanos;

    private LoopbackProber(HealthState state, URI target, HealthSettings settings) {
        this.state = state;
        this.target = target;
        this.interval = settings.proberInterval();
        this.client = WebClient.builder()
                .baseUri(target)
                .keepAlive(false)
                .connectTimeout(settings.proberTimeout())
                .readTimeout(settings.proberTimeout())
                .followRedirects(false)
                .build();
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "loopback-prober");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Creates a prober; call {@link #start()} once the business server listens.
     *
     * @param state    where the result goes
     * @param pingUri  the business port's ping, e.g. {@code http://127.0.0.1:8080/ping}
     * @param settings interval and timeout
     * @return the prober
     */
    public static LoopbackProber create(HealthState state, URI pingUri, HealthSettings settings) {
        return new LoopbackProber(state, pingUri, settings);
    }

    /** Probes once immediately, then every interval. */
    public void start() {
        unhealthySinceNanos = System.nanoTime();
        scheduler.scheduleWithFixedDelay(this::probeOnce, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
    }

    void probeOnce() {
        PortStatus port = probe();
        state.probed(port);
        if (port.answered()) {
            if (consecutiveFailures > 0) {
                LOGGER.log(Level.INFO, "Loopback prober: app server responding again at {0} after {1,number,#} failed probes, "
                                       + "unhealthy for {2,number,#} ms", target, consecutiveFailures, elapsedMillis());
            }
            consecutiveFailures = 0;
            return;
        }
        if (consecutiveFailures == 0) {
            unhealthySinceNanos = System.nanoTime();
        }
        consecutiveFailures++;
        if (consecutiveFailures == 1 || consecutiveFailures % 20 == 0) {
            LOGGER.log(Level.WARNING, "Loopback prober: app server not responding at {0}, {1,number,#} consecutive failures, "
                                      + "unhealthy for {2,number,#} ms", target, consecutiveFailures, elapsedMillis());
        }
    }

    private PortStatus probe() {
        try (HttpClientResponse response = client.get().request()) {
            // 200 is the ping; 503 is the business listener's load shedding, which proves it accepted, parsed and
            // answered: saturated, not wedged (readiness fails, liveness does not).
            return switch (response.status().code()) {
            case 200 -> PortStatus.SERVING;
            case 503 -> PortStatus.SATURATED;
            default -> PortStatus.NOT_RESPONDING;
            };
        } catch (RuntimeException e) {
            return PortStatus.NOT_RESPONDING;
        }
    }

    private long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - unhealthySinceNanos);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
