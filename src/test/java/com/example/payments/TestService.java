package com.example.payments;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import com.example.payments.authentication.ApiKeyAuthenticator;
import com.example.payments.authentication.Authenticator;
import com.example.payments.observability.Tracing;
import com.example.payments.observability.TracingSettings;
import com.example.payments.testing.Http;
import com.example.payments.testing.Leftovers;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.OpenApiContract;
import com.example.payments.testing.TestCredentials;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.health.HealthCheck;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;

/**
 * Both listeners started in this JVM through {@link Main#start}, on ports picked by the OS, with the test
 * configuration's API keys ({@link TestCredentials}), for over-the-wire tests.
 */
final class TestService implements AutoCloseable {

    private final Running running;
    private final OpenApiContract.Registration contract;
    private final Leftovers.Handle tracked;

    /**
     * In-process services running now. Helidon keeps every meter in one registry per JVM (MetricsFactory's global
     * one), as a process that runs one service needs; the tests run many services one after another in one JVM, and
     * the meters of stopped ones would add to the next one's figures, making them depend on which tests ran before.
     * So a service started while no other runs starts from an empty registry. Self-cleaning: a service counts here
     * from its start to its stop, also when Leftovers stops it.
     */
    private static final AtomicInteger RUNNING = new AtomicInteger();

    private TestService(Running running) {
        this.running = running;
        RUNNING.incrementAndGet();
        this.contract = OpenApiContract.businessListener(running.business().port(), running.business()::isRunning);
        this.tracked = Leftovers.track("in-process service on business port " + running.business().port(),
                                       this::stop);
    }

    static TestService start(Map<String, String> overrides) {
        return start(overrides, List.of());
    }

    static TestService start(Map<String, String> overrides, List<HealthCheck> readinessChecks) {
        Config config = freshMeters(config(overrides));
        // No signal handlers in the test JVM: its SIGTERM belongs to the build tool.
        TestService service = new TestService(Main.start(config, AppSettings.create(config), readinessChecks,
                                                          sequence -> { }));
        service.awaitStarted();
        return service;
    }

    /**
     * Starts the service with another authentication seam, wired where a fork wires its own.
     *
     * @param overrides     configuration values
     * @param authenticator the seam
     * @return the running service
     */
    static TestService start(Map<String, String> overrides, Authenticator authenticator) {
        Config config = freshMeters(config(overrides));
        TestService service = new TestService(Main.start(config, AppSettings.create(config), List.of(), authenticator,
                                                          sequence -> { }));
        service.awaitStarted();
        return service;
    }

    /**
     * Starts the service with tracing on ({@code tracing.enabled: true}), its spans going to the given exporter; they
     * are all exported when the service is closed, and the exporter is not shut down (an in-memory one keeps them).
     *
     * @param overrides configuration values
     * @param exporter  e.g. an in-memory exporter
     * @return the running service
     */
    static TestService start(Map<String, String> overrides, SpanExporter exporter) {
        Map<String, String> values = new HashMap<>(Map.of("tracing.enabled", "true", "tracing.exporter", "logging"));
        values.putAll(overrides);
        Config config = freshMeters(config(values));
        AppSettings settings = AppSettings.create(config);
        TestService service = new TestService(Main.start(config, settings, List.of(),
                ApiKeyAuthenticator.create(settings.auth().apiKeys()),
                sequence -> { }, Tracing.install(settings.tracing(), keptOnShutdown(exporter))));
        service.awaitStarted();
        return service;
    }

    /**
     * Starts the service with the tracing the given function builds from the settings (e.g. the configured exporter
     * with OpenTelemetry properties standing in for {@code OTEL_*} environment variables).
     *
     * @param overrides configuration values
     * @param tracing   builds and installs the tracing
     * @return the running service
     */
    static TestService startTraced(Map<String, String> overrides, Function<TracingSettings, Tracing> tracing) {
        Config config = freshMeters(config(overrides));
        AppSettings settings = AppSettings.create(config);
        TestService service = new TestService(Main.start(config, settings, List.of(),
                ApiKeyAuthenticator.create(settings.auth().apiKeys()), sequence -> { },
                tracing.apply(settings.tracing())));
        service.awaitStarted();
        return service;
    }

    private static SpanExporter keptOnShutdown(SpanExporter exporter) {
        return new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> batch) {
                return exporter.export(batch);
            }

            @Override
            public CompletableResultCode flush() {
                return exporter.flush();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
    }

    // Ephemeral ports and the test configuration's API keys (TestCredentials), below the test's own values.
    private static Config config(Map<String, String> overrides) {
        // No warm-up unless the test asks for one (WarmUpTest): it holds every start up to warm-up.timeout (3 s).
        Map<String, String> values = new HashMap<>(Map.of("server.port", "0", "health-server.port", "0",
                                                          "warm-up.requests", "0"));
        values.putAll(TestCredentials.config());
        values.putAll(overrides);
        return Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.create(values))
                .addSource(ConfigSources.classpath("application.yaml"))
                .build();
    }

    Running running() {
        return running;
    }

    String business(String path) {
        return "http://127.0.0.1:" + running.business().port() + path;
    }

    String health(String path) {
        return "http://127.0.0.1:" + running.health().port() + path;
    }

    HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return Http.get(url);
    }

    HttpResponse<String> post(String key, String body) throws IOException, InterruptedException {
        return Http.post(business("/v1/authorizations"), key, body);
    }

    double metric(String name, Map<String, String> labels) throws IOException, InterruptedException {
        return MetricsScrape.of(running.health().port()).sum(name, labels);
    }

    double authorizerInvocations() throws IOException, InterruptedException {
        return metric("authorizer_invocations_total", Map.of());
    }

    private void awaitStarted() {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!running.state().startupComplete()) {
            if (System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("startup did not complete");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        tracked.close();
        stop();
    }

    private void stop() {
        contract.close();
        try {
            running.stopForTests();
        } finally {
            RUNNING.decrementAndGet();
        }
    }

    // Before Main.start: the meters left by services that stopped go, unless another service still runs.
    private static Config freshMeters(Config config) {
        if (RUNNING.get() == 0) {
            MeterRegistry registry = Services.get(MetricsFactory.class).globalRegistry();
            registry.meters().forEach(registry::remove);
        }
        return config;
    }
}
