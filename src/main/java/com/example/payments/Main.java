package com.example.payments;

import java.lang.System.Logger.Level;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import com.example.payments.authentication.ApiKeyAuthenticator;
import com.example.payments.authentication.Authenticator;
import com.example.payments.config.AppConfigFiles;
import com.example.payments.config.ConfigurationException;
import com.example.payments.config.KnownKeys;
import com.example.payments.health.HealthService;
import com.example.payments.health.HealthState;
import com.example.payments.health.LoopbackProber;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.lifecycle.InFlightCountingFilter;
import com.example.payments.lifecycle.PeriodicWorker;
import com.example.payments.lifecycle.ShutdownSequence;
import com.example.payments.lifecycle.ShutdownSequenceBuilder;
import com.example.payments.lifecycle.Signals;
import com.example.payments.logging.Logging;
import com.example.payments.observability.AccessLog;
import com.example.payments.observability.RequestMetricsFilter;
import com.example.payments.observability.Tracing;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.health.HealthCheck;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.WebServer;

/**
 * Composition root of payments-authorization: reads the configuration, builds every component ({@link Components}),
 * starts the business listener (8080) and the health listener (8081) as two {@link WebServer}s in this process with
 * their {@link Routes}, starts the {@link BackgroundWorkers}, and hands SIGTERM and SIGINT to the
 * {@link ShutdownSequence}; {@link Running} is what it started.
 *
 * <p>Configuration sources, highest priority first: system properties, environment variables, the YAML files named by
 * {@code APP_CONFIG_FILE} (comma-separated, the last one highest: {@link AppConfigFiles}), then
 * {@code application.yaml} on the classpath; a system property or an environment variable may raise
 * {@code app.environment} above what those files declare, never lower it ({@link EnvironmentRules}). A key this
 * service does not know, in those files or as a system property, is refused; one only an environment variable sets
 * is logged as a warning ({@link KnownKeys}). A configuration mistake prints one line naming the key and the allowed
 * range and exits with status 2.
 */
public final class Main {

    static {
        // Before the first logger of this process (this class's own, below): java.util.logging handed to Log4j, the
        // format and service fields of the first line.
        Logging.bootstrap();
    }

    private static final System.Logger LOGGER = System.getLogger(Main.class.getName());

    private Main() {
    }

    /**
     * Starts the service.
     *
     * @param args ignored; configure with {@code -Dkey=value}, environment variables or {@code APP_CONFIG_FILE}
     */
    public static void main(String[] args) {
        launch(sequence -> Signals.install(sequence::begin));
    }

    /**
     * {@link #main} with its one seam, the signal handling (the load tests' naive contender, test code, has its own).
     *
     * @param signalHandling hands the shutdown sequence to the signal handlers, before startup can complete
     * @return the running service, once its startup line is logged; a configuration mistake exits with status 2
     */
    static Running launch(Consumer<ShutdownSequence> signalHandling) {
        // System.out becomes a logger, System.err is masked (docs/observability.md#logs, docs/card-data.md).
        Logging.redirectConsole();
        try {
            AppConfigFiles files = AppConfigFiles.parse(System.getenv(AppConfigFiles.VARIABLE));
            Config config = config(files);
            KnownKeys known = KnownKeys.load();
            known.checkSystemProperties(System.getProperties());
            files.paths().forEach(known::checkFile);
            EnvironmentRules.checkFloor(config, files.value());
            AppSettings settings = AppSettings.create(config);
            Logging.configure(settings.logFormat().name(), settings.environment().name());
            known.environmentWarnings(System.getenv()).forEach(warning -> LOGGER.log(Level.WARNING, warning));
            Running running = start(config, settings, List.of(), signalHandling);
            LOGGER.log(Level.INFO, "payments-authorization serving business traffic on port {0}, health probes and "
                                   + "metrics on port {1}", String.valueOf(running.business().port()),
                       String.valueOf(running.health().port()));
            return running;
        } catch (ConfigurationException | io.helidon.common.config.ConfigException e) {
            // One line, no stack trace: it is what `kubectl describe pod` and a crash-looping pod's log show.
            Throwable reported = e instanceof io.helidon.common.config.ConfigException helidon
                    ? ConfigurationException.from(helidon).<Throwable>map(named -> named).orElse(e) : e;
            System.err.println("Invalid configuration: " + oneLine(reported));
            Logging.stop();
            System.exit(2);
            return null;
        }
    }

    /**
     * Loads the configuration.
     *
     * @param files the environment's YAML files ({@code APP_CONFIG_FILE}), possibly none
     * @return the merged configuration
     * @throws ConfigurationException when {@code APP_CONFIG_FILE} names a file that does not exist
     */
    static Config config(AppConfigFiles files) {
        files.checkReadable();
        Config.Builder builder = Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.systemProperties())
                .addSource(ConfigSources.environmentVariables());
        return files.addTo(builder).addSource(ConfigSources.classpath("application.yaml")).build();
    }

    /**
     * Builds and starts everything, callers authenticated by the API keys of {@code auth.*}. Tests call this with
     * ports set to 0.
     *
     * @param config          the whole configuration (the {@code server} and {@code health-server} nodes configure
     *                        the listeners)
     * @param settings        validated settings
     * @param readinessChecks extra required readiness dependencies (tests use checks that hang, fail and throw)
     * @param signalHandling  hands the shutdown sequence to the signal handlers, before startup can complete
     *                        ({@code main} installs SIGTERM and SIGINT; in-JVM tests install nothing)
     * @return the running service
     */
    static Running start(Config config, AppSettings settings, List<HealthCheck> readinessChecks,
                         Consumer<ShutdownSequence> signalHandling) {
        if (settings.auth().apiKeys().size() == 0) {
            LOGGER.log(Level.WARNING, "No API key configured (auth.api-keys, auth.api-keys-file): every authorization "
                                      + "request is answered 401");
        }
        if (settings.idempotency().generatedSecret()) {
            LOGGER.log(Level.WARNING, "No idempotency.fingerprint-secret configured: request identities use a random "
                                      + "secret of this process (app.environment dev, in-memory store, rule-based "
                                      + "authorizer only); config/dev/config.yaml sets the development one");
        }
        return start(config, settings, readinessChecks, ApiKeyAuthenticator.create(settings.auth().apiKeys()),
                     signalHandling);
    }

    /**
     * Builds and starts everything with the given authentication seam: where a fork wires its own
     * {@link Authenticator} (mTLS, JWT, a trusted proxy's header) instead of API keys.
     *
     * @param config          the whole configuration
     * @param settings        validated settings
     * @param readinessChecks extra required readiness dependencies
     * @param authenticator   turns each business request into a caller or a 401
     * @param signalHandling  hands the shutdown sequence to the signal handlers
     * @return the running service
     */
    static Running start(Config config, AppSettings settings, List<HealthCheck> readinessChecks,
                         Authenticator authenticator, Consumer<ShutdownSequence> signalHandling) {
        return start(config, settings, readinessChecks, authenticator, signalHandling,
                     Tracing.install(settings.tracing()));
    }

    /**
     * Builds and starts everything with the given authentication seam and tracing (tests: an in-memory exporter).
     *
     * @param config          the whole configuration
     * @param settings        validated settings
     * @param readinessChecks extra required readiness dependencies
     * @param authenticator   turns each business request into a caller or a 401
     * @param signalHandling  hands the shutdown sequence to the signal handlers
     * @param tracing         installed tracing, closed (its last spans exported) with the other resources
     * @return the running service
     */
    static Running start(Config config, AppSettings settings, List<HealthCheck> readinessChecks,
                         Authenticator authenticator, Consumer<ShutdownSequence> signalHandling, Tracing tracing) {
        Components components = Components.create(settings, readinessChecks, authenticator);
        MeterRegistry meters = components.meters();
        HealthState state = components.state();
        Backends backends = components.backends();
        InFlightCountingFilter inFlight = components.inFlight();

        FileDescriptorBudget.require(settings.http());
        RequestDeadlines businessDeadlines = RequestDeadlines.start("business", settings.http().headerTimeout(),
                                                                    settings.http().bodyTimeout());
        RequestDeadlines healthDeadlines = RequestDeadlines.start("health", settings.http().headerTimeout(),
                                                                  settings.http().bodyTimeout());
        WebServer business = Listeners.startBusiness(config, settings, businessDeadlines, state::businessResponded,
                RequestMetricsFilter.create(meters).unrouted(),
                routing -> Routes.business(routing, state, inFlight, meters, businessDeadlines,
                                           components.authentication(),
                                           AccessLog.filter(settings.accessLog(), Set.of(Listeners.PING)),
                                           components.authorizations(), components.operations()));

        HealthService probes = HealthService.create(state, components.dependencies(), backends.capacity(),
                                                    components.watchdog(), settings.health(), meters);
        OpenApiDocument openApi = OpenApiDocument.load();
        WebServer health = Listeners.startHealth(config, settings, healthDeadlines,
                                                 routing -> Routes.health(routing, probes, meters, openApi), business,
                                                 openApi);
        List<PeriodicWorker> workers = BackgroundWorkers.start(settings, components);

        LoopbackProber prober = LoopbackProber.create(state, Listeners.pingUri(config, business.port()),
                                                      settings.health());
        // The one list of what the cleanup phase closes, by name: the shutdown sequence and stopForTests close these.
        Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        resources.put("authorizer", components.authorizations());
        resources.put("idempotency-registry", components.registry());
        resources.put("dependency-checks", components.dependencies());
        resources.put("tracing", tracing);
        resources.put("jvm-metrics", components.jvm());
        resources.putAll(backends.resources());
        resources.putAll(components.issuer().resources());
        ShutdownSequenceBuilder sequence = ShutdownSequence.builder()
                .settings(settings.shutdown())
                .state(state)
                .servers(business, health)
                .inFlight(inFlight)
                .halfSentRequests(businessDeadlines::closeHalfSent)
                .registry(components.registry())
                .closeWhenDrainBegins("loopback-prober", prober)
                .meters(meters);
        resources.forEach(sequence::addResource);
        sequence.addDiscoveredResources();
        workers.forEach(sequence::addWorker);
        ShutdownSequence shutdown = sequence.build();
        // The signal handlers go in before anything can report ready: a SIGTERM between the first 200 on
        // /health/ready and their installation would hit the JVM's default handler and skip the drain.
        signalHandling.accept(shutdown);
        prober.start();
        // Routes registered, dependencies wired: startup completes with the first loopback probe after the warm-up.
        WarmUp.start(settings, backends, meters, state::draining, state::markWired);
        return new Running(business, health, state, shutdown, meters, Collections.unmodifiableMap(resources),
                           List.of(prober, businessDeadlines, healthDeadlines), List.copyOf(workers));
    }

    private static String oneLine(Throwable error) {
        StringBuilder line = new StringBuilder();
        for (Throwable e = error; e != null && line.length() < 400; e = e.getCause()) {
            if (e.getMessage() != null && !line.toString().contains(e.getMessage())) {
                line.append(line.isEmpty() ? "" : ": ").append(e.getMessage());
            }
        }
        return line.toString().replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
