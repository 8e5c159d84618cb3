package com.example.payments.idempotency;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import com.example.payments.http.Problem;
import com.example.payments.testing.Http;

import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;

/**
 * The idempotent-operation flow as a fork reuses it for its next operation: a toy {@code capture} endpoint built on
 * {@link IdempotentOperation} alone, over the wire, with its status codes, its scoping by operation and merchant, its
 * lease and drain checks, and what it answers when the work is cut off or its decision cannot be recorded.
 */
class IdempotentOperationTest {

    private static final IdempotentOperation.Definition CAPTURE = new IdempotentOperation.Definition(
            "capture", "capture", "/v1/captures", "POST /v1/captures");
    private static final IdempotentOperation.Definition REFUND = new IdempotentOperation.Definition(
            "refund", "refund", "/v1/refunds", "POST /v1/refunds");
    private static final RequestIdentities IDENTITIES = RequestIdentities.create("a-test-secret-of-16+",
                                                                                 Optional.empty());
    private static final IdempotencySettings.StoreBounds NO_BOUNDS = new IdempotencySettings.StoreBounds(
            Duration.ZERO, Duration.ZERO);

    private final List<String> attempts = new CopyOnWriteArrayList<>();
    private final List<Recorded> afterRecording = new CopyOnWriteArrayList<>();
    private final List<WebServer> servers = new CopyOnWriteArrayList<>();
    private final List<IdempotencyRegistry> registries = new CopyOnWriteArrayList<>();

    /** The work of the toy endpoint: records the attempt id; a body containing "fail" fails like an issuer (502). */
    private Work work(String body, String merchant) {
        return attempt -> {
            attempts.add(attempt.attemptId());
            if (body.contains("fail")) {
                return new Work.Undecided(Problem.of("downstream-unavailable", "Down", 502,
                        "The downstream service failed."), IdempotencyRegistry.ReleaseReason.ISSUER_UNAVAILABLE);
            }
            if (body.contains("cut-off")) {
                throw new InterruptedException("the drain ended");
            }
            String resource = "{\"id\":\"" + attempt.resourceId() + "\",\"merchant\":\"" + merchant + "\",\"at\":"
                              + System.nanoTime() + "}";
            if (body.contains("own-attempt")) {
                // A downstream that does not deduplicate: this execution sent an attempt id of its own.
                return new Work.Decided(resource.getBytes(StandardCharsets.UTF_8), () -> { },
                                        "att_own_" + attempt.token(), afterRecording::add);
            }
            return new Work.Decided(resource.getBytes(StandardCharsets.UTF_8), () -> { });
        };
    }

    /** A toy resource API on the flow: the merchant comes from a header, as a caller identity would. */
    private final class ToyService implements HttpService {
        private final IdempotentOperation operation;

        ToyService(IdempotentOperation operation) {
            this.operation = operation;
        }

        @Override
        public void routing(HttpRules rules) {
            rules.post(this::post);
        }

        private static String merchant(ServerRequest req) {
            return req.headers().first(io.helidon.http.HeaderNames.create("Merchant")).orElse("m_1");
        }

        private void post(ServerRequest req, ServerResponse res) {
            String body = req.content().as(String.class);
            Optional<IdempotencyKey> key = operation.key(req, res);
            if (key.isPresent()) {
                String merchant = merchant(req);
                operation.execute(req, res, merchant, key.get(), body, work(body, merchant));
            }
        }
    }

    private record Running(WebServer server, IdempotencyStore store, IdempotencyRegistry registry) {
        String url(String path) {
            return "http://127.0.0.1:" + server.port() + path;
        }
    }

    private Running start(IdempotencyStore store, Duration lease, Duration workTimeout,
                          IdempotentOperation.DrainDeadline drain) {
        IdempotencyRegistry registry = IdempotencyRegistry.create(store, lease, Duration.ofHours(1), Duration.ZERO, Quota.UNLIMITED,
                                                                  Metrics.createMeterRegistry(MetricsConfig.create()));
        registries.add(registry);
        IdempotentOperation capture = IdempotentOperation.create(CAPTURE, registry, InMemoryKeyBindings.create(100),
                                                                 IDENTITIES, NO_BOUNDS, workTimeout, drain);
        IdempotentOperation refund = IdempotentOperation.create(REFUND, registry, InMemoryKeyBindings.create(100),
                                                                IDENTITIES, NO_BOUNDS, workTimeout, drain);
        WebServer server = WebServer.builder().port(0).host("127.0.0.1")
                .routing(routing -> routing.register("/v1/captures", new ToyService(capture))
                        .register("/v1/refunds", new ToyService(refund)))
                .build().start();
        servers.add(server);
        return new Running(server, store, registry);
    }

    private Running start() {
        return start(InMemoryIdempotencyStore.create(100), Duration.ofSeconds(10), Duration.ofSeconds(1),
                     OptionalLong::empty);
    }

    @AfterEach
    void stop() {
        servers.forEach(WebServer::stop);
        registries.forEach(IdempotencyRegistry::close);
    }

    private static HttpResponse<String> post(Running running, String path, String key, String merchant, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(running.url(path)))
                .header("Content-Type", "application/json").header("Merchant", merchant)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> capture(Running running, String key, String body) throws Exception {
        return post(running, "/v1/captures", key, "m_1", body);
    }

    @Test
    void aSecondOperationReusesTheFlowWithReplay() throws Exception {
        Running running = start();
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = capture(running, key, "{\"amount\":100}");
        assertThat(first.statusCode(), is(201));
        String location = first.headers().firstValue("Location").orElseThrow();
        assertThat(location.startsWith("/v1/captures/"), is(true));

        HttpResponse<String> replay = capture(running, key, "{\"amount\":100}");
        assertThat(replay.statusCode(), is(201));
        assertThat(replay.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
        assertThat(replay.body(), is(first.body()));
        assertThat(capture(running, key, "{\"amount\":999}").statusCode(), is(422));
        assertThat(capture(running, null, "{\"amount\":100}").body(),
                   containsString("Idempotency-Key header is required for POST /v1/captures."));
        assertThat(attempts, hasSize(1));
    }

    @Test
    void keysAreScopedByOperationAndByMerchant() throws Exception {
        Running running = start();
        String key = UUID.randomUUID().toString();
        HttpResponse<String> captured = capture(running, key, "{\"amount\":100}");
        HttpResponse<String> refunded = post(running, "/v1/refunds", key, "m_1", "{\"amount\":100}");
        HttpResponse<String> otherMerchant = post(running, "/v1/captures", key, "m:2", "{\"amount\":100}");
        for (HttpResponse<String> response : List.of(captured, refunded, otherMerchant)) {
            assertThat(response.statusCode(), is(201));
            assertThat(response.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        }
        assertThat(attempts.stream().distinct().toList(), hasSize(3));
    }

    @Test
    void afterAFailureTheSameRequestRetriesWithItsAttemptIdAndAnotherRequestIsUnprocessable() throws Exception {
        Running running = start();
        String key = UUID.randomUUID().toString();
        assertThat(capture(running, key, "{\"amount\":100,\"fail\":true}").statusCode(), is(502));
        // The downstream may have acted on the first attempt id: the released key stays bound to its request.
        HttpResponse<String> other = capture(running, key, "{\"amount\":250}");
        assertThat(other.statusCode(), is(422));
        assertThat(other.body(), containsString("idempotency-key-reused"));
        assertThat(capture(running, key, "{\"amount\":100,\"fail\":true}").statusCode(), is(502));
        assertThat("the other request never ran", attempts, hasSize(2));
        assertThat("the same request keeps its attempt id", attempts.get(1), is(attempts.get(0)));
    }

    @Test
    void aLeaseThatCannotCoverTheWorkStopsItBeforeItStartsAndHoldsNothing() throws Exception {
        Running running = start(InMemoryIdempotencyStore.create(100), Duration.ofSeconds(1), Duration.ofSeconds(2),
                                OptionalLong::empty);
        String key = UUID.randomUUID().toString();
        HttpResponse<String> response = capture(running, key, "{\"amount\":100}");
        assertThat(response.statusCode(), is(503));
        assertThat(response.body(), containsString("lease-lost"));
        assertThat(response.headers().firstValue("Retry-After").isPresent(), is(true));
        assertThat("the work never ran", attempts, is(empty()));
        assertThat(running.registry().heldCount(), is(0));
        assertThat("released before the work began, the key is bound to nothing: another body may use it",
                   capture(running, key, "{\"amount\":250}").body(), containsString("lease-lost"));
    }

    @Test
    void aCutOffRequestAnswersOutcomeUnknownNever500AndReleasesItsKey() throws Exception {
        Running running = start();
        String key = UUID.randomUUID().toString();
        HttpResponse<String> cutOff = capture(running, key, "{\"cut-off\":true}");
        assertThat(cutOff.statusCode(), is(504));
        assertThat(cutOff.body(), containsString("outcome-unknown"));
        assertThat(cutOff.headers().firstValue("Retry-After").isPresent(), is(true));
        assertThat(running.registry().heldCount(), is(0));
        assertThat("released: the retry runs the work again", capture(running, key, "{\"cut-off\":true}").statusCode(),
                   is(504));
        assertThat(attempts, hasSize(2));
        assertThat("still bound to the cut-off request", capture(running, key, "{\"amount\":1}").statusCode(), is(422));
    }

    @Test
    void aDecisionThatCannotBeRecordedAnswersOutcomeUnknownAndKeepsTheKeyForItsLease() throws Exception {
        InMemoryIdempotencyStore memory = InMemoryIdempotencyStore.create(100);
        IdempotencyStore failingRecord = new ForwardingStore(memory) {
            @Override
            public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                              Duration retention) {
                throw new UnavailableException("simulated: the store stopped answering", null);
            }
        };
        Running running = start(failingRecord, Duration.ofSeconds(10), Duration.ofSeconds(1), OptionalLong::empty);
        String key = UUID.randomUUID().toString();
        HttpResponse<String> first = capture(running, key, "{\"amount\":100}");
        assertThat(first.statusCode(), is(504));
        assertThat(first.body(), containsString("outcome-unknown"));
        assertThat("never released after a decision: a retry waits for the lease", capture(running, key,
                "{\"amount\":100}").statusCode(), is(409));
        assertThat(attempts, hasSize(1));
    }

    @Test
    void aDecisionIsRecordedUnderTheAttemptIdThatDecidedIt() throws Exception {
        List<String> recordedAttempts = new CopyOnWriteArrayList<>();
        IdempotencyStore watched = new ForwardingStore(InMemoryIdempotencyStore.create(100)) {
            @Override
            public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                              Duration retention) {
                recordedAttempts.add(identity.attemptId());
                return super.recordAndComplete(lookupKey, identity, token, decision, retention);
            }
        };
        Running running = start(watched, Duration.ofSeconds(10), Duration.ofSeconds(1), OptionalLong::empty);
        assertThat(capture(running, UUID.randomUUID().toString(), "{\"amount\":100}").statusCode(), is(201));
        assertThat("by default the request's own", recordedAttempts.get(0), is(attempts.get(0)));
        assertThat(afterRecording, is(empty()));

        assertThat(capture(running, UUID.randomUUID().toString(), "{\"own-attempt\":true}").statusCode(), is(201));
        assertThat("the execution's own when it sent one", recordedAttempts.get(1).startsWith("att_own_"), is(true));
        assertThat("told what the recording stored", afterRecording, hasSize(1));
        assertThat(afterRecording.getFirst().inserted(), is(true));
    }

    @Test
    void aRecordedDecisionOfAnIncompleteKeyIsReplayedWithoutRunningTheWork() throws Exception {
        Running running = start();
        String key = UUID.randomUUID().toString();
        String body = "{\"amount\":100}";
        Identity identity = IDENTITIES.of("capture", "capture", "m_1", new IdempotencyKey(key), body).getFirst();
        String lookupKey = RequestIdentities.lookupKey("capture", "m_1", new IdempotencyKey(key));
        // Another execution claimed the key, recorded its decision, and its completion was refused.
        Claim.Acquired other = (Claim.Acquired) running.store().claim(lookupKey, List.of(identity),
                                                                       Duration.ofSeconds(10), Quota.UNLIMITED);
        Decision recorded = new Decision(identity.decision(), "{\"recorded\":true}".getBytes(StandardCharsets.UTF_8));
        running.store().recordAndComplete(lookupKey, identity, other.token() + 1, recorded, Duration.ofHours(1));

        HttpResponse<String> retry = capture(running, key, body);
        assertThat(retry.statusCode(), is(201));
        assertThat(retry.body(), is("{\"recorded\":true}"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
        assertThat(attempts, is(empty()));
    }

    @Test
    void whileDrainingARequestThatCouldNotFinishBeforeTheDeadlineIsNotClaimed() throws Exception {
        IdempotencyStore store = InMemoryIdempotencyStore.create(100);
        Running running = start(store, Duration.ofSeconds(10), Duration.ofSeconds(2),
                                () -> OptionalLong.of(System.nanoTime() + Duration.ofSeconds(1).toNanos()));
        String key = UUID.randomUUID().toString();
        HttpResponse<String> refused = capture(running, key, "{\"amount\":100}");
        assertThat(refused.statusCode(), is(503));
        assertThat(refused.body(), containsString("draining"));
        assertThat(refused.headers().firstValue("Retry-After").isPresent(), is(true));
        assertThat(attempts, is(empty()));
        Identity identity = IDENTITIES.of("capture", "capture", "m_1", new IdempotencyKey(key), "{\"amount\":100}")
                .getFirst();
        assertThat("nothing claimed", store.claim(RequestIdentities.lookupKey("capture", "m_1", new IdempotencyKey(key)),
                                                  List.of(identity), Duration.ofSeconds(1), Quota.UNLIMITED),
                   instanceOf(Claim.Acquired.class));
    }

    @Test
    void whileDrainingARequestThatCanFinishBeforeTheDeadlineIsServed() throws Exception {
        Running running = start(InMemoryIdempotencyStore.create(100), Duration.ofSeconds(10), Duration.ofSeconds(2),
                                () -> OptionalLong.of(System.nanoTime() + Duration.ofSeconds(30).toNanos()));
        assertThat(capture(running, UUID.randomUUID().toString(), "{\"amount\":100}").statusCode(), is(201));
    }

    /** Delegates every call; tests override the one that fails. */
    static class ForwardingStore implements IdempotencyStore {
        private final IdempotencyStore delegate;

        ForwardingStore(IdempotencyStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota) {
            return delegate.claim(lookupKey, identities, lease, quota);
        }

        @Override
        public boolean renew(String lookupKey, long token, Duration lease) {
            return delegate.renew(lookupKey, token, lease);
        }

        @Override
        public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                          Duration retention) {
            return delegate.recordAndComplete(lookupKey, identity, token, decision, retention);
        }

        @Override
        public boolean release(String lookupKey, long token) {
            return delegate.release(lookupKey, token);
        }

        @Override
        public Optional<Decision> findDecision(DecisionKey key) {
            return delegate.findDecision(key);
        }
    }
}
