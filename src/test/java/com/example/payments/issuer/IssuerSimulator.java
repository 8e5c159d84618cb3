package com.example.payments.issuer;

import java.time.Duration;

import java.lang.System.Logger.Level;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;
import com.example.payments.logging.Logging;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.metrics.MetricsObserver;

/**
 * A card issuer that deduplicates on the attempt id, as a small HTTP service: what the {@code http} authorizer calls
 * in tests, load tests and soaks, where several replicas of the service share one simulator. Test code: it runs from
 * the test-tools jar (the pom's {@code test-tools} execution) beside the service's jar, whose manifest Class-Path
 * brings the libraries, and is never in the service's jar:
 * <pre>
 * java -Dissuer.port=8090 -cp target/payments-authorization.jar:target/payments-authorization-test-tools.jar \
 *     com.example.payments.issuer.IssuerSimulator
 * </pre>
 * and logs {@code Issuer simulator listening on port <port>} once it listens.
 *
 * <p>Routes: {@code POST /v1/authorizations} and {@code GET /stats} ({@link IssuerSimulatorService}), {@code GET
 * /metrics} (Prometheus text: the {@code issuer_*} series of {@link SimulatedIssuer}).
 *
 * <p>Configuration, from system properties or environment variables ({@code ISSUER_PORT}):
 * {@code issuer.port} (default 8090, 0 picks a free port), {@code issuer.host} (default 127.0.0.1),
 * {@code issuer.default-limit} (1000000 minor units), {@code issuer.simulated-latency} and
 * {@code issuer.simulated-latency-jitter} (PT0S; hold calls in flight), {@code issuer.ledger-retention} (P8D, at
 * least the services' {@code authorization.validity}) and {@code issuer.ledger-max-entries} (100000),
 * {@code issuer.idle-connection-timeout} (PT5M, Helidon's default: a keep-alive connection idle this long is closed,
 * checked every tenth of it; the server's idle clock ticks once a second). A mistake prints one line naming the key and exits with status 2.
 */
public final class IssuerSimulator {

    static {
        // Before the first logger (this class's own, below): java.util.logging handed to Log4j, like the service's.
        Logging.bootstrap();
    }

    private static final System.Logger LOGGER = System.getLogger(IssuerSimulator.class.getName());
    /** Largest accepted request body: 16 KiB, as on the service. */
    private static final long MAX_PAYLOAD_BYTES = 16 * 1024;

    private IssuerSimulator() {
    }

    /**
     * Validated {@code issuer.*} configuration.
     *
     * @param host   {@code issuer.host}, default {@code 127.0.0.1} ({@code 0.0.0.0} to serve other hosts)
     * @param port   {@code issuer.port}, default 8090; 0 picks a free port
     * @param issuer limit, simulated latency and ledger bounds under {@code issuer.*}
     * @param idleConnectionTimeout {@code issuer.idle-connection-timeout}, default PT5M: how long a keep-alive
     *                              connection may stay idle before the simulator closes it (tests of stale pooled
     *                              connections set a second)
     * @param deduplicateAttempts {@code issuer.deduplicate-attempts}, default {@code true}; {@code false} decides
     *                            every call afresh, a known attempt id too: an acquirer that does not deduplicate, for
     *                            soak tests that count cards approved twice net of reversals
     */
    record Settings(String host, int port, IssuerSettings issuer, Duration idleConnectionTimeout,
                    boolean deduplicateAttempts) {

        private enum Toggle { TRUE, FALSE }

        static Settings create(ConfigValues values) {
            return new Settings(values.string("issuer.host").orElse("127.0.0.1").trim(),
                                (int) values.longInRange("issuer.port", 8090, 0, 65535),
                                IssuerSettings.create(values, "issuer"),
                                values.positiveDuration("issuer.idle-connection-timeout", Duration.ofMinutes(5)),
                                values.oneOf("issuer.deduplicate-attempts", Toggle.class, Toggle.TRUE) == Toggle.TRUE);
        }
    }

    /**
     * Starts the simulator.
     *
     * @param args ignored; configure with {@code -Dissuer.port=...} or environment variables
     */
    public static void main(String[] args) {
        Logging.redirectConsole();
        WebServer server;
        try {
            Config config = Config.builder()
                    .disableEnvironmentVariablesSource()
                    .disableSystemPropertiesSource()
                    .addSource(ConfigSources.systemProperties())
                    .addSource(ConfigSources.environmentVariables())
                    .build();
            server = start(Settings.create(ConfigValues.create(config)),
                           Services.get(MetricsFactory.class).globalRegistry());
        } catch (ConfigurationException | io.helidon.common.config.ConfigException e) {
            System.err.println("Invalid configuration: " + e.getMessage());
            System.exit(2);
            return;
        }
        LOGGER.log(Level.INFO, "Issuer simulator listening on port {0}", String.valueOf(server.port()));
    }

    /**
     * Builds the simulated issuer and starts its server.
     *
     * @param settings validated settings
     * @param meters   where the {@code issuer_*} metrics go; {@code /metrics} serves the global registry
     * @return the listening server
     * @throws ConfigurationException naming {@code issuer.port} when it cannot listen
     */
    static WebServer start(Settings settings, MeterRegistry meters) {
        SimulatedIssuer issuer = SimulatedIssuer.create(settings.issuer(), meters,
                                                        settings.deduplicateAttempts());
        WebServer server = WebServer.builder()
                .host(settings.host())
                .port(settings.port())
                .featuresDiscoverServices(false)
                .maxPayloadSize(MAX_PAYLOAD_BYTES)
                .idleConnectionTimeout(settings.idleConnectionTimeout())
                .idleConnectionPeriod(settings.idleConnectionTimeout().dividedBy(10))
                .addFeature(ObserveFeature.builder()
                                    .observersDiscoverServices(false)
                                    .endpoint("/")
                                    .addObserver(MetricsObserver.builder().endpoint("metrics").build())
                                    .build())
                .routing(routing -> routing.register(new IssuerSimulatorService(issuer)))
                .build()
                .start();
        if (!server.isRunning() || server.port() <= 0) {
            server.stop();
            throw new ConfigurationException("issuer.port", "cannot listen on port " + settings.port() + " (in use, "
                                                            + "or not permitted); allowed: a free port from 0 to 65535");
        }
        return server;
    }
}
