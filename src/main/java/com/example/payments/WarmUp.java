package com.example.payments;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Year;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
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
import com.example.payments.issuer.IssuerRules;
import com.example.payments.observability.Tracing;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.opentelemetry.context.Scope;

/**
 * Warms the hot path before startup completes: sends {@code warm-up.requests} synthetic requests, bounded by
 * {@code warm-up.timeout}, through a sandbox copy of the authorization API on its own listener (127.0.0.1, a free
 * port, stopped afterwards). The sandbox runs the real code — Helidon's HTTP/1 parsing and writing, JSON parsing,
 * validation, fingerprint and ids, the idempotent-operation flow and its responses, and the stores' code — over
 * throwaway parts: stores of its own ({@link Backends#sandbox}: in memory, or the real database's pool and
 * statements in transactions that are rolled back, with one client per pool connection), an authorizer that applies
 * the test-card rules with no issuer and no ledger, and meters that count nothing ({@link SandboxMeters}). It
 * bypasses the startup gate and authentication (its caller is set by the sandbox) and has no request-metrics filter
 * and no access log, and records no span, so it touches no real issuer, metric, log line, trace or quota, and writes
 * no row.
 *
 * <p>The mix, in turn: new approvals, a replay, a decline, an invalid body (400) and a {@code GET} of a created id.
 * Counted in {@code warm_up_requests_total{outcome}} ({@code answered}: the expected status; {@code failed}: another
 * status or an error, logged once). The warm-up never fails startup: it is an optimisation, and stops at its timeout.
 */
final class WarmUp {

    private static final System.Logger LOGGER = System.getLogger(WarmUp.class.getName());
    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    private static final String MERCHANT = "m_warm_up";
    private static final int CLIENTS = 2;
    private static final String PATH = "/v1/authorizations";

    private static final int MAX_CLIENTS = 16;
    // The warm-up sends at most this many times warm-up.requests while the JIT settles (JitSettling).
    private static final int SETTLING_FACTOR = 20;

    private final AppSettings settings;
    private final Backends backends;
    private final Counter answered;
    private final Counter failed;
    private final AtomicReference<String> firstFailure = new AtomicReference<>();
    private final AtomicReference<String> storeFailure = new AtomicReference<>();

    private WarmUp(AppSettings settings, Backends backends, MeterRegistry meters) {
        this.settings = settings;
        this.backends = backends;
        this.answered = counter(meters, "answered");
        this.failed = counter(meters, "failed");
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
        IdempotencySettings idempotency = settings.idempotency();
        MeterRegistry sandboxMeters = SandboxMeters.create();
        // With a database, as many clients as pool connections (up to 16): each connection runs the statements.
        int clientCount = backends.database()
                .map(db -> Math.clamp(db.settings().poolSize(), CLIENTS, MAX_CLIENTS)).orElse(CLIENTS);
        Backends.Sandbox stores = backends.sandbox(sandboxMeters, limits.requests() * SETTLING_FACTOR + clientCount);
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger throughStore = new AtomicInteger();
        AtomicInteger storeOk = new AtomicInteger();
        firstFailure.set(null);
        storeFailure.set(null);
        boolean settled = false;
        try (IdempotencyRegistry registry = IdempotencyRegistry.create(stores.idempotency(),
                     idempotency.inFlightLease(), idempotency.retention(), Duration.ZERO, Quota.UNLIMITED,
                     sandboxMeters);
             AuthorizationService api = AuthorizationService.create(
                     IdempotentOperation.create(AuthorizationService.OPERATION, registry, stores.bindings(),
                                                RequestIdentities.create(idempotency.fingerprintSecret(),
                                                                         idempotency.previousSecret()),
                                                idempotency.bounds(), settings.authorizer().timeout(),
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
                                req.context().register(new Caller(MERCHANT));
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
            AtomicBoolean finished = new AtomicBoolean();
            try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int c = 0; c < clientCount; c++) {
                    int worker = c;
                    clients.execute(() -> {
                        String location = null;
                        // Checked before taking a number: the count logged is of requests sent.
                        while (!stop.getAsBoolean() && !finished.get() && System.nanoTime() - deadline < 0) {
                            int i = sent.getAndIncrement();
                            if (i >= limits.requests() * SETTLING_FACTOR) {
                                return;
                            }
                            if (i % 8 != 6) {
                                throughStore.incrementAndGet();
                            }
                            location = send(client, worker, i, location, ok, storeOk, stores.rolledBack());
                        }
                    });
                }
                try {
                    settled = JitSettling.await(() -> sent.get() >= limits.requests(), stop, deadline);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                finished.set(true);
            } finally {
                client.closeResource();
                sandbox.stop();
            }
        }
        LOGGER.log(Level.INFO, "Warm-up: {0} of {1} sandbox requests answered as expected in {2} ms ({3})",
                   String.valueOf(ok.get()), String.valueOf(Math.min(sent.get(), limits.requests() * SETTLING_FACTOR)),
                   String.valueOf((System.nanoTime() - start) / 1_000_000),
                   settled ? "the JIT settled" : "stopped before the JIT settled");
        if (throughStore.get() == 0 || storeOk.get() > 0) {
            return Optional.empty();
        }
        return Optional.of("0 of " + throughStore.get() + " sandbox requests through the store answered as expected"
                           + " (first: " + (storeFailure.get() != null ? storeFailure.get() : firstFailure.get()) + ")");
    }

    // One request of the mix; returns the Location of the last authorization this client created.
    private String send(WebClient client, int worker, int i, String location, AtomicInteger ok,
                        AtomicInteger storeOk, boolean rolledBack) {
        int kind = i % 8;
        String key = "warm-up-" + worker + "-" + (kind == 4 ? i - 1 : i);
        try (HttpClientResponse response = kind == 7 && location != null
                ? client.get(location).request()
                : client.post(PATH)
                        .header(IDEMPOTENCY_KEY, key)
                        .contentType(MediaTypes.APPLICATION_JSON)
                        .submit(body(kind, kind == 4 ? i - 1 : i))) {
            int status = response.status().code();
            response.entity().as(byte[].class);
            // A rolled-back store kept nothing the sandbox created: its GET is a 404.
            int expected = kind == 6 ? 400 : kind == 7 && location != null ? (rolledBack ? 404 : 200) : 201;
            if (status == expected) {
                answered.increment();
                ok.incrementAndGet();
                if (kind != 6) {
                    storeOk.incrementAndGet();
                }
            } else {
                fail("status " + status + " to request " + i);
            }
            return status == 201 ? response.headers().first(HeaderNames.LOCATION).orElse(location) : location;
        } catch (RuntimeException e) {
            fail(String.valueOf(e));
            return location;
        }
    }

    private void fail(String what) {
        if (firstFailure.compareAndSet(null, what) && failed.count() == 0) {
            LOGGER.log(Level.WARNING, "Warm-up: unexpected answer from the sandbox ({0}); counted in "
                                      + "warm_up_requests_total'{'outcome=\"failed\"'}'", what);
        }
        failed.increment();
    }

    // Synthetic numbers made here, none written in the code: any Luhn-valid one the rules do not name approves, the
    // declining test card declines, the same number with a wrong check digit is a 400.
    private static byte[] body(int kind, int i) {
        String card = switch (kind) {
        case 5 -> IssuerRules.DECLINED_CARD;
        case 6 -> wrongCheckDigit(syntheticCard(i));
        default -> syntheticCard(i);
        };
        return ("{\"merchantId\":\"" + MERCHANT + "\",\"reference\":\"warm-up-" + i + "\",\"amount\":{\"value\":"
                + (100 + i % 5000) + ",\"currency\":\"EUR\"},\"card\":{\"number\":\"" + card
                + "\",\"expiryMonth\":12,\"expiryYear\":" + (Year.now().getValue() + 3) + ",\"cvc\":\"123\"}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    // 16 digits: a Visa ("4") or Mastercard ("51") prefix, the index, and the Luhn check digit.
    private static String syntheticCard(int i) {
        String prefix = i % 2 == 0 ? "4" : "51";
        // Offset so that no index makes one of the rules' named test cards (all below 4000000000010000).
        String payload = prefix + String.format("%0" + (15 - prefix.length()) + "d", 1_000_000L + i);
        int sum = 0;
        for (int d = 0; d < payload.length(); d++) {
            int digit = payload.charAt(payload.length() - 1 - d) - '0';
            // From the right, every other digit of the payload is doubled (the check digit will sit right of them).
            sum += d % 2 == 0 ? (digit * 2 > 9 ? digit * 2 - 9 : digit * 2) : digit;
        }
        return payload + (10 - sum % 10) % 10;
    }

    private static String wrongCheckDigit(String card) {
        int last = card.charAt(card.length() - 1) - '0';
        return card.substring(0, card.length() - 1) + (last + 1) % 10;
    }

    private static Counter counter(MeterRegistry meters, String outcome) {
        return meters.getOrCreate(Counter.builder("warm_up_requests")
                                          .tags(List.of(Tag.create("outcome", outcome)))
                                          .description("Synthetic requests of the startup warm-up, through the "
                                                       + "sandbox; never counted anywhere else"));
    }
}
