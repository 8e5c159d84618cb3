package com.example.payments;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import com.example.payments.authentication.ApiKeyAuthenticator;
import com.example.payments.authentication.AuthFailures;
import com.example.payments.authentication.AuthenticationFilter;
import com.example.payments.authentication.Authenticator;
import com.example.payments.authorization.AuthorizationService;
import com.example.payments.authorization.Expiry;
import com.example.payments.authorization.Reconciler;
import com.example.payments.authorization.OperationService;
import com.example.payments.config.AppConfigFiles;
import com.example.payments.config.ConfigurationException;
import com.example.payments.config.KnownKeys;
import com.example.payments.health.DependencyChecks;
import com.example.payments.health.HealthService;
import com.example.payments.health.HealthState;
import com.example.payments.health.Heartbeat;
import com.example.payments.health.LoopbackProber;
import com.example.payments.health.MetricsHead;
import com.example.payments.health.StartupGateFilter;
import com.example.payments.health.WorkerWatchdog;
import com.example.payments.http.AllowedMethodsFilter;
import com.example.payments.http.ConnectionCloseFilter;
import com.example.payments.http.HeaderFieldsFilter;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.http.RequestIdFilter;
import com.example.payments.http.RequestMetricsFilter;
import com.example.payments.http.RequestTargetFilter;
import com.example.payments.http.ResponseBodies;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotentOperation;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.lifecycle.InFlightCountingFilter;
import com.example.payments.lifecycle.PeriodicWorker;
import com.example.payments.lifecycle.ShutdownSequence;
import com.example.payments.lifecycle.Signals;
import com.example.payments.logging.Logging;
import com.example.payments.observability.AccessLog;
import com.example.payments.observability.BuildInfo;
import com.example.payments.observability.JvmMetrics;
import com.example.payments.observability.Tracing;
import com.example.payments.observability.TracingFilter;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import io.helidon.health.HealthCheck;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.PathMatchers;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.HttpRouting;

/**
 * Composition root of payments-authorization: reads the configuration, builds every component, starts the business
 * listener (8080) and the health listener (8081) as two {@link WebServer}s in this process, and hands SIGTERM and
 * SIGINT to the {@link ShutdownSequence}.
 *
 * <p>Configuration sources, highest priority first: system properties, environment variables, the YAML files named by
 * {@code APP_CONFIG_FILE} (comma-separated, the last one highest: {@link AppConfigFiles}), then
 * {@code application.yaml} on the classpath; a system property or an environment variable may raise
 * {@code app.environment} above what those files declare, never lower it ({@link EnvironmentRules}). A key this
 * service does not know, in those files or as a system property, is refused; one only an environment variable sets
 * is logged as a warning ({@link KnownKeys}). A configuration mistake prints one line naming the key and the allowed
 * range and exits with status 2.
 *
 * <p>Size: the composition root builds and wires every component, on purpose in one place.
 */
public final class Main {

    static {
        // Before the first logger of this process (this class's own, below): java.util.logging handed to Log4j, the
        // format and service fields of the first line.
        Logging.bootstrap();
    }

    private static final System.Logger LOGGER = System.getLogger(Main.class.getName());
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
    /** How long {@link Running#stopForTests()} waits for the background workers to end. */
    private static final Duration WORKER_STOP_TIMEOUT = Duration.ofSeconds(5);
    private static final byte[] PONG = "pong".getBytes(StandardCharsets.UTF_8);
    private static final List<Method> GET_HEAD = List.of(Method.GET, Method.HEAD);
    /** The loopback prober's route: public, and neither logged by the access log nor traced. */
    static final String PING = "/ping";

    private Main() {
    }

    /**
     * Starts the service.
     *
     * @param args ignored; configure with {@code -Dkey=value}, environment variables or {@code APP_CONFIG_FILE}
     */
    public static void main(String[] args) {
        // Logging was set up by this class's static initializer, before any logger existed; System.out becomes a logger
        // and System.err is masked (docs/observability.md#logs, docs/card-data.md).
        Logging.redirectConsole();
        Running running;
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
            running = start(config, settings, List.of(), sequence -> Signals.install(sequence::begin));
        } catch (ConfigurationException | io.helidon.common.config.ConfigException e) {
            // One line, no stack trace: it is what `kubectl describe pod` and a crash-looping pod's log show.
            Throwable reported = e instanceof io.helidon.common.config.ConfigException helidon
                    ? ConfigurationException.from(helidon).<Throwable>map(named -> named).orElse(e) : e;
            System.err.println("Invalid configuration: " + oneLine(reported));
            Logging.stop();
            System.exit(2);
            return;
        }
        LOGGER.log(Level.INFO, "payments-authorization serving business traffic on port {0}, health probes and "
                               + "metrics on port {1}", String.valueOf(running.business().port()),
                   String.valueOf(running.health().port()));
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
        // Helidon's registries all share Micrometer's global one; use it openly.
        MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
        JvmMetrics jvm = JvmMetrics.bind(meters, BuildInfo.load());
        HealthState state = new HealthState();
        WorkerWatchdog watchdog = new WorkerWatchdog(meters);

        IdempotencySettings idempotency = settings.idempotency();
        Backends backends = Backends.create(idempotency, settings.lifecycle(), settings.health().checkTimeout(),
                                            meters);
        IdempotencyRegistry registry = IdempotencyRegistry.create(backends.idempotency(), idempotency.inFlightLease(),
                idempotency.retention(), idempotency.bounds().record(), idempotency.merchantQuota(), meters);
        List<HealthCheck> checks = new ArrayList<>(readinessChecks);
        checks.addAll(backends.readinessChecks());
        DependencyChecks dependencies = DependencyChecks.create(checks, settings.health().checkTimeout());

        AuthorizerBackend issuer = AuthorizerBackend.create(settings.authorizer(), meters);
        IdempotentOperation authorize = IdempotentOperation.create(AuthorizationService.OPERATION, registry,
                backends.bindings(),
                RequestIdentities.create(idempotency.fingerprintSecret(), idempotency.previousSecret()),
                idempotency.bounds(), settings.authorizer().timeout(), state::drainDeadline);
        AuthFailures authFailures = AuthFailures.create(meters, businessResources().keySet());
        AuthorizationService authorizations = AuthorizationService.create(authorize, issuer.authorizer(),
                settings.authorizer(), backends.authorizations(), settings.lifecycle(), Clock.systemUTC(), meters,
                authFailures, backends.outcomes());
        OperationService operations = OperationService.create(
                operation(OperationService.CAPTURE, registry, backends, settings, state),
                operation(OperationService.VOID, registry, backends, settings, state), backends.authorizations(),
                authorizations, settings.lifecycle(), Clock.systemUTC(), meters);
        AuthenticationFilter authentication = AuthenticationFilter.create(authenticator, authFailures,
                                                                          Set.of(PING));
        InFlightCountingFilter inFlight = InFlightCountingFilter.create(meters);

        FileDescriptorBudget.require(settings.http());
        RequestDeadlines businessDeadlines = RequestDeadlines.start("business", settings.http().headerTimeout(),
                                                                    settings.http().bodyTimeout());
        RequestDeadlines healthDeadlines = RequestDeadlines.start("health", settings.http().headerTimeout(),
                                                                  settings.http().bodyTimeout());
        WebServer business = Listeners.startBusiness(config, settings, businessDeadlines, state::businessResponded,
                RequestMetricsFilter.create(meters).unrouted(),
                routing -> businessRouting(routing, state, inFlight, meters, businessDeadlines, authentication,
                                           AccessLog.filter(settings.accessLog(), Set.of(PING)), authorizations,
                                           operations));

        HealthService probes = HealthService.create(state, dependencies, backends.capacity(), watchdog,
                                                    settings.health(), meters);
        OpenApiDocument openApi = OpenApiDocument.load();
        WebServer health = Listeners.startHealth(config, settings, healthDeadlines,
                                                 routing -> healthRouting(routing, probes, meters, openApi), business,
                                                 openApi);

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
                backends.outcomes(), registry, backends.bindings(), backends.authorizations(), authorizations,
                settings.authorizer(), Clock.systemUTC(), RECONCILE_BATCH, meters)));

        LoopbackProber prober = LoopbackProber.create(state, Listeners.pingUri(config, business.port()),
                                                      settings.health());
        // The one list of what the cleanup phase closes, by name: the shutdown sequence and stopForTests close these.
        Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        resources.put("authorizer", authorizations);
        resources.put("idempotency-registry", registry);
        resources.put("dependency-checks", dependencies);
        resources.put("tracing", tracing);
        resources.put("jvm-metrics", jvm);
        resources.putAll(backends.resources());
        resources.putAll(issuer.resources());
        ShutdownSequence.Builder sequence = ShutdownSequence.builder()
                .settings(settings.shutdown())
                .state(state)
                .servers(business, health)
                .inFlight(inFlight)
                .halfSentRequests(businessDeadlines::closeHalfSent)
                .registry(registry)
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
        // Routes are registered, dependencies wired; once the warm-up ran, startup completes with the first successful
        // loopback probe.
        WarmUp.start(settings, backends, meters, state::draining, state::markWired);
        return new Running(business, health, state, shutdown, meters, Collections.unmodifiableMap(resources),
                           List.of(prober, businessDeadlines, healthDeadlines), List.copyOf(workers));
    }

    /**
     * Routing of the business listener: {@code /ping} and the authorization API, behind the tracing filter (the
     * request's span), the request id filter
     * ({@code X-Request-Id}, first so that every answer has one), the {@code Connection: close}
     * filter (client asked, body left unread, draining), the in-flight counter, request metrics, the body deadline,
     * the request target and header field rules (400, 404, 415, 417), the method filter (405, 501), the startup gate
     * and authentication (401 on every path but {@code /ping}).
     *
     * @param routing        routing builder of the business server
     * @param state          health flags
     * @param inFlight       in-flight counter the drain waits on
     * @param meters         metrics registry
     * @param deadlines      the business listener's request deadlines
     * @param authentication the authentication filter
     * @param accessLog      the access log, one line per request once it is answered
     * @param authorizations the API
     * @param operations     captures and voids
     */
    static void businessRouting(HttpRouting.Builder routing, HealthState state, InFlightCountingFilter inFlight,
                                MeterRegistry meters, RequestDeadlines deadlines, AuthenticationFilter authentication,
                                Filter accessLog, AuthorizationService authorizations, OperationService operations) {
        Map<String, List<Method>> resources = businessResources();
        resources.put(PING, GET_HEAD);
        routing.addFilter(TracingFilter.create(Set.of(PING)))
                .addFilter(RequestIdFilter.create())
                .addFilter(accessLog)
                .addFilter(ConnectionCloseFilter.create(state::draining))
                .addFilter(inFlight)
                .addFilter(RequestMetricsFilter.create(meters))
                .addFilter(deadlines.bodyDeadlineFilter())
                .addFilter(RequestTargetFilter.create())
                .addFilter(HeaderFieldsFilter.create())
                .addFilter(AllowedMethodsFilter.create(resources))
                .addFilter(StartupGateFilter.create(state))
                .addFilter(authentication)
                // The cheapest possible proof of life for the loopback prober: touches nothing, needs no credentials.
                .route(Method.predicate(Method.GET, Method.HEAD), PathMatchers.exact(PING),
                       (req, res) -> {
                           res.header(HeaderNames.CONTENT_TYPE, "text/plain; charset=UTF-8");
                           ResponseBodies.send(req, res, PONG);
                       })
                .register(authorizations)
                .register(operations);
    }

    // Every business path and its methods: authorizations, their captures and voids.
    private static Map<String, List<Method>> businessResources() {
        Map<String, List<Method>> resources = new LinkedHashMap<>(AuthorizationService.RESOURCES);
        resources.putAll(OperationService.RESOURCES);
        return resources;
    }

    // The idempotent-operation flow of a capture or a void: the registry, key bindings and bounds of authorizations.
    private static IdempotentOperation operation(IdempotentOperation.Definition definition,
                                                 IdempotencyRegistry registry, Backends backends,
                                                 AppSettings settings, HealthState state) {
        IdempotencySettings idempotency = settings.idempotency();
        return IdempotentOperation.create(definition, registry, backends.bindings(),
                RequestIdentities.create(idempotency.fingerprintSecret(), idempotency.previousSecret()),
                idempotency.bounds(), settings.authorizer().timeout(), state::drainDeadline);
    }

    /**
     * Routing of the health listener: the probes and {@code HEAD /metrics} ({@code GET /metrics} comes from the
     * observe feature, {@code GET /openapi} from the OpenAPI feature), {@code GET} and {@code HEAD} only, behind the
     * {@code Connection: close} filter and the request target and header field rules, as on the business listener.
     *
     * @param routing routing builder of the health server
     * @param probes  the probe routes
     * @param meters  the registry {@code /metrics} serves
     * @param openApi the document {@code /openapi} serves
     */
    static void healthRouting(HttpRouting.Builder routing, HealthService probes, MeterRegistry meters,
                              OpenApiDocument openApi) {
        Map<String, List<Method>> resources = new LinkedHashMap<>();
        HealthService.PATHS.forEach(path -> resources.put(path, GET_HEAD));
        resources.put(MetricsHead.PATH, GET_HEAD);
        resources.put(Listeners.OPENAPI_PATH, GET_HEAD);
        routing.addFilter(RequestIdFilter.create())
                .addFilter(ConnectionCloseFilter.create(() -> false))
                .addFilter(RequestTargetFilter.create())
                .addFilter(HeaderFieldsFilter.create())
                .addFilter(AllowedMethodsFilter.create(resources))
                .register(probes)
                .head(MetricsHead.PATH, MetricsHead.create(meters))
                // GET /openapi comes from the OpenAPI feature, which has no HEAD: the headers of its YAML answer.
                .head(Listeners.OPENAPI_PATH, (req, res) -> {
                    res.header(HeaderNames.CONTENT_TYPE, "application/vnd.oai.openapi");
                    ResponseBodies.send(req, res, openApi.yamlBytes());
                });
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


    /**
     * The running service.
     *
     * @param business  business server
     * @param health    health server
     * @param state     health flags
     * @param shutdown  the SIGTERM sequence
     * @param meters    metrics registry
     * @param resources the resources the shutdown sequence closes in its cleanup phase, by name, in registration
     *                  order; {@link #stopForTests()} closes the same ones
     * @param listenerHelpers not in the cleanup phase: the loopback prober (the sequence closes it when the drain
     *                  begins) and the request-deadline watchers (they end with the process); {@link #stopForTests()}
     *                  closes them first
     * @param workers   the background workers (sweeper, expiry, reconciler); the shutdown sequence stops them in its
     *                  cleanup phase, {@link #stopForTests()} before it closes the resources they use
     */
    record Running(WebServer business, WebServer health, HealthState state, ShutdownSequence shutdown,
                   MeterRegistry meters, Map<String, AutoCloseable> resources, List<AutoCloseable> listenerHelpers,
                   List<PeriodicWorker> workers) {

        /**
         * Stops both listeners, closes resources and removes every meter, without the shutdown sequence (in-JVM tests
         * only: the next instance in the same JVM registers its own gauges).
         */
        void stopForTests() {
            business.stop();
            health.stop();
            // Workers first: one left running would use closed resources and, the tracer being process-wide, export
            // its spans into the next service started in the same JVM.
            workers.forEach(PeriodicWorker::requestStop);
            long deadline = System.nanoTime() + WORKER_STOP_TIMEOUT.toNanos();
            for (PeriodicWorker worker : workers) {
                try {
                    worker.awaitStop(deadline);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            meters.meters().forEach(meters::remove);
            List<AutoCloseable> all = new ArrayList<>(listenerHelpers);
            all.addAll(resources.values());
            for (AutoCloseable resource : all) {
                try {
                    resource.close();
                } catch (Exception ignored) {
                    // best effort in tests
                }
            }
        }
    }
}
