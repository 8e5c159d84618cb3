package com.example.payments;

import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import com.example.payments.authentication.AuthFailures;
import com.example.payments.authentication.Caller;
import com.example.payments.authorization.AuthorizationService;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotentOperation;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.observability.Tracing;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.opentelemetry.context.Scope;

/**
 * Warms the hot path before startup completes: sends {@code warm-up.requests} synthetic requests, bounded by
 * {@code warm-up.timeout}, through a sandbox copy of the authorization API on its own listener (127.0.0.1, a free
 * port, stopped afterwards). The sandbox runs the real code — Helidon's HTTP/1 parsing and writing, JSON parsing,
 * validation, fingerprint and ids, the idempotent-operation flow and its responses, and the stores' code — over
 * throwaway parts: stores of its own ({@link Backends#sandbox}: in memory, or the real database's pool and
 * statements in transactions that are rolled back, with one client per pool connection for 8
 * requests per connection, then the rest of the requests on in-memory stores, so that the warm-up loads the shared
 * database no more than a few requests per connection), an authorizer that applies
 * the test-card rules with no issuer and no ledger, and meters that count nothing ({@link SandboxMeters}). It
 * bypasses the startup gate and authentication (its caller is set by the sandbox) and has no request-metrics filter
 * and no access log, and records no span, so it touches no real issuer, metric, log line, trace or quota, and writes
 * no row.
 *
 * <p>The requests and how they are counted: {@link WarmUpRequests}. The warm-up never fails startup: it is an
 * optimisation, and stops at its timeout.
 */
final class WarmUp {

    private static final System.Logger LOGGER = System.getLogger(WarmUp.class.getName());
    private static final int CLIENTS = 2;

    private static final int MAX_CLIENTS = 16;
    // Requests per pool connection on the database: pgjdbc prepares a statement on the server at its 5th run.
    private static final int STORE_ROUNDS = 8;

    private final AppSettings settings;
    private final Backends backends;
    private final WarmUpRequests mix;
    private final AtomicReference<String> storeFailure = new AtomicReference<>();

    private WarmUp(AppSettings settings, Backends backends, MeterRegistry meters) {
        this.settings = settings;
        this.backends = backends;
        this.mix = new WarmUpRequests(meters);
    }

    /**
     * Runs the warm-up on a thread of its own, then runs {@code done} (also when it was off, stopped or failed);
     * with a database, first waits for its pool ({@link StoreWarmUp}).
     *
     * @param settings the service's settings ({@code warm-up.*}, and the real fingerprint secret and timeouts)
     * @param backends the service's stores: the sandbox runs their code ({@link Backends#sandbox})
     * @param meters   the service's registry: only {@code warm_up_requests_total} goes there
     * @param stop     {@code true} once the warm-up should stop early (the shutdown began)
     * @param done     marks this part of startup complete
     */
    static void start(AppSettings settings, Backends backends, MeterRegistry meters, BooleanSupplier stop,
                      Runnable done) {
        WarmUp warmUp = new WarmUp(settings, backends, meters);
        int requests = settings.warmUp().requests();
        if (requests == 0 && backends.database().isEmpty()) {
            done.run();
            return;
        }
        Supplier<Optional<String>> sandbox = () -> {
            try {
                return warmUp.run(stop);
            } catch (RuntimeException | Error e) {
                LOGGER.log(Level.WARNING, "Warm-up failed, startup goes on: {0}", String.valueOf(e));
                return Optional.of(String.valueOf(e));
            }
        };
        Thread.ofPlatform().name("warm-up").daemon(true).start(
                () -> StoreWarmUp.run(backends, requests, stop, requests == 0 ? Optional::empty : sandbox, done));
    }

    /**
     * Sends the requests and waits for them, up to {@code warm-up.timeout}.
     *
     * @param stop ends the warm-up early when {@code true}
     * @return empty when at least one request through the stores (every request but the invalid body's 400) was
     *         answered with the expected status, or none was sent; else why not, e.g. {@code 0 of 56 sandbox requests
     *         through the store answered as expected (first: status 503 to request 0)}
     */
    Optional<String> run(BooleanSupplier stop) {
        WarmUpSettings limits = settings.warmUp();
        long start = System.nanoTime();
        long deadline = start + limits.timeout().toNanos();
        MeterRegistry sandboxMeters = SandboxMeters.create();
        int requests = limits.requests();
        mix.reset();
        storeFailure.set(null);
        Sent sent;
        Sent inMemory = new Sent(0, 0, 0, 0);
        if (backends.database().isPresent()) {
            // As many clients as pool connections (up to 16), each connection running the statements STORE_ROUNDS
            // times; the rest of the requests on in-memory stores, on this replica's CPU only: a warm-up at full
            // speed on the shared database took the other replicas' share of it (a rolling restart's old replicas
            // failed 1,672 requests while a replacement booted and warmed up 500 requests on the store for 14 s).
            int clients = Math.clamp(backends.database().get().settings().poolSize(), CLIENTS, MAX_CLIENTS);
            int onStore = Math.min(requests, clients * STORE_ROUNDS);
            sent = send(backends.sandbox(sandboxMeters, onStore + clients), clients, onStore, stop, deadline,
                        sandboxMeters);
            // A store that answered none of its requests: no more warm-up until it does (StoreWarmUp retries).
            if (requests > onStore && (sent.throughStore() == 0 || sent.storeOk() > 0)) {
                inMemory = send(Backends.inMemorySandbox(requests - onStore + CLIENTS), CLIENTS, requests - onStore,
                                stop, deadline, sandboxMeters);
            }
        } else {
            sent = send(backends.sandbox(sandboxMeters, requests + CLIENTS), CLIENTS, requests, stop, deadline,
                        sandboxMeters);
        }
        LOGGER.log(Level.INFO, "Warm-up: {0} of {1} sandbox requests answered as expected in {2} ms ({3} of them "
                               + "on the database)",
                   String.valueOf(sent.ok() + inMemory.ok()), String.valueOf(sent.sent() + inMemory.sent()),
                   String.valueOf((System.nanoTime() - start) / 1_000_000),
                   String.valueOf(backends.database().isPresent() ? sent.sent() : 0));
        if (sent.throughStore() == 0 || sent.storeOk() > 0) {
            return Optional.empty();
        }
        return Optional.of("0 of " + sent.throughStore() + " sandbox requests through the store answered as expected"
                           + " (first: " + (storeFailure.get() != null ? storeFailure.get() : mix.firstFailure()) + ")");
    }

    /**
     * What the sandbox's clients sent and how it was answered.
     *
     * @param sent         requests sent
     * @param ok           answered with the expected status
     * @param throughStore sent through the store (all but the invalid body)
     * @param storeOk      of them, answered with the expected status
     */
    private record Sent(int sent, int ok, int throughStore, int storeOk) {
    }

    // The sandbox on the stores given: requests from `clients` clients until `count` were sent, the stop or the
    // deadline.
    private Sent send(Backends.Sandbox stores, int clients, int count, BooleanSupplier stop, long deadline,
                        MeterRegistry sandboxMeters) {
        IdempotencySettings idempotency = settings.idempotency();
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger throughStore = new AtomicInteger();
        AtomicInteger storeOk = new AtomicInteger();
        try (IdempotencyRegistry registry = IdempotencyRegistry.create(stores.idempotency(),
                     idempotency.inFlightLease(), idempotency.retention(), Duration.ZERO, Quota.UNLIMITED,
                     sandboxMeters);
             AuthorizationService api = AuthorizationService.create(
                     IdempotentOperation.create(AuthorizationService.OPERATION, registry, stores.bindings(),
                                                RequestIdentities.create(idempotency.fingerprintSecret(),
                                                                         idempotency.previousSecret()),
                                                settings.backends().bounds(), settings.authorizer().timeout(),
                                                OptionalLong::empty,
                                                // Summed up in the result, not logged per request.
                                                refusal -> storeFailure.compareAndSet(null, refusal)),
                     new WarmUpAuthorizer(settings.authorizer().ruleBased().defaultLimit()), settings.authorizer(),
                     stores.authorizations(), settings.lifecycle(), Clock.systemUTC(), sandboxMeters,
                     AuthFailures.create(sandboxMeters, AuthorizationService.RESOURCES.keySet()))) {
            WebServer sandbox = WebServer.builder()
                    .host("127.0.0.1")
                    .port(0)
                    .shutdownHook(false)
                    .featuresDiscoverServices(false)
                    .routing(routing -> routing
                            .addFilter((chain, req, res) -> {
                                req.context().register(new Caller(WarmUpRequests.MERCHANT));
                                // No span of the warm-up is recorded: every span of the service follows its parent's
                                // sampling, and this parent was not sampled (each request was an orphan trace).
                                try (Scope ignored = Tracing.unsampled().makeCurrent()) {
                                    chain.proceed();
                                }
                            })
                            .register(api))
                    .build()
                    .start();
            WebClient client = WebClient.builder()
                    .baseUri("http://127.0.0.1:" + sandbox.port())
                    .shareConnectionCache(false)
                    .build();
            try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int c = 0; c < clients; c++) {
                    int worker = c;
                    threads.execute(() -> {
                        String location = null;
                        // Checked before taking a number: the count logged is of requests sent.
                        while (!stop.getAsBoolean() && System.nanoTime() - deadline < 0) {
                            int i = sent.getAndIncrement();
                            if (i >= count) {
                                return;
                            }
                            if (i % 8 != 6) {
                                throughStore.incrementAndGet();
                            }
                            location = mix.send(client, worker, i, location, ok, storeOk, stores.rolledBack());
                        }
                    });
                }
            } finally {
                client.closeResource();
                sandbox.stop();
            }
        }
        return new Sent(Math.min(sent.get(), count), ok.get(), throughStore.get(), storeOk.get());
    }
}
