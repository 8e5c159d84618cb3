package com.example.payments;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static com.example.payments.testing.TestCredentials.OTHER_KEY;
import static com.example.payments.testing.TestCredentials.OTHER_MERCHANT;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;

/**
 * Over the wire: callers are authenticated, and a merchant only ever sees and spends its own. Both listeners
 * started through Main's wiring with the test configuration's two keys: {@code m_123} (the development key) and
 * {@code m_456}.
 */
class AuthenticationApiTest {

    private static final String WRONG_KEY = "pa_live_" + "Zq".repeat(16);
    private static final String OTHER = TestCredentials.bearer(OTHER_KEY);

    private static TestService service;
    private static LogCapture logs;

    @BeforeAll
    static void start() {
        logs = LogCapture.start();
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
        String text = logs.text();
        logs.close();
        for (String credential : List.of(TestCredentials.DEV_KEY, OTHER_KEY, WRONG_KEY, "Zq".repeat(16))) {
            assertThat("a log holds a credential", text, not(containsString(credential)));
        }
    }

    private static String key() {
        return "\"" + UUID.randomUUID() + "\"";
    }

    private static String url() {
        return service.business("/v1/authorizations");
    }

    private static HttpResponse<String> post(String authorization, String body) throws Exception {
        return Http.post(url(), key(), body, authorization);
    }

    private static String otherMerchantsBody() {
        return Http.VALID_BODY.replace("m_123", OTHER_MERCHANT);
    }

    private static double failures(String reason) throws Exception {
        return service.metric("auth_failures_total", Map.of("reason", reason));
    }

    private static long logLines(String text) {
        return logs.text().lines().filter(line -> line.contains(text)).count();
    }

    private static void assertUnauthenticated(HttpResponse<String> response, String error) throws Exception {
        assertThat(response.body(), response.statusCode(), is(401));
        String challenge = response.headers().firstValue("WWW-Authenticate").orElseThrow();
        assertThat(challenge, startsWith("Bearer realm=\"payments-authorization\""));
        if (error != null) {
            assertThat(challenge, containsString("error=\"" + error + "\""));
        }
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(Json.mapper().readTree(response.body()).get("type").asText(), containsString("unauthenticated"));
    }

    @Test
    void noCredentialsIsUnauthorizedWithABearerChallengeCountedAndLoggedOnce() throws Exception {
        double before = failures("missing");
        long lines = logLines("Authentication failed (missing): POST /v1/authorizations");

        assertUnauthenticated(post(null, Http.VALID_BODY), null);

        assertThat(failures("missing") - before, is(1.0));
        assertThat(logLines("Authentication failed (missing): POST /v1/authorizations") - lines, is(1L));
    }

    @Test
    void aWrongKeyIsUnauthorizedAndNeverLogged() throws Exception {
        double before = failures("unknown");
        HttpResponse<String> response = post(TestCredentials.bearer(WRONG_KEY), Http.VALID_BODY);
        assertUnauthenticated(response, "invalid_token");
        assertThat(response.body(), not(containsString(WRONG_KEY)));
        assertThat(failures("unknown") - before, is(1.0));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"Basic bTpw", "Bearer", "Bearer two tokens", "Bearer bad\"char", "bearer"})
    void malformedCredentialsAreUnauthorized(String authorization) throws Exception {
        double before = failures("malformed");
        assertUnauthenticated(post(authorization, Http.VALID_BODY), "invalid_request");
        assertThat(failures("malformed") - before, is(1.0));
    }

    @Test
    void twoAuthorizationHeadersAreUnauthorized() throws Exception {
        HttpResponse<String> response = Http.client().send(HttpRequest.newBuilder(java.net.URI.create(url()))
                .header("Authorization", TestCredentials.AUTHORIZATION).header("Authorization", OTHER)
                .header("Content-Type", "application/json").header("Idempotency-Key", key())
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build(), HttpResponse.BodyHandlers.ofString());
        assertUnauthenticated(response, "invalid_request");
    }

    @Test
    void theSchemeIsCaseInsensitive() throws Exception {
        assertThat(post("bEaReR " + TestCredentials.DEV_KEY, Http.VALID_BODY).statusCode(), is(201));
    }

    @Test
    void readsNeedCredentialsTooAndHeadGetsTheSameAnswerWithoutABody() throws Exception {
        String location = post(TestCredentials.AUTHORIZATION, Http.VALID_BODY).headers().firstValue("Location")
                .orElseThrow();
        assertUnauthenticated(Http.get(service.business(location), null), null);
        HttpResponse<String> head = Http.client().send(HttpRequest.newBuilder(java.net.URI.create(
                service.business(location))).method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(head.statusCode(), is(401));
        assertThat(head.body(), is(""));
        assertThat(head.headers().firstValue("WWW-Authenticate").orElseThrow(), startsWith("Bearer"));
    }

    @Test
    void aRefusalBeforeTheBodyWasReadClosesTheConnectionAndNothingIsClaimed() throws Exception {
        String key = key();
        try (RawHttp connection = RawHttp.connect(service.running().business().port(), null, "unauthenticated")) {
            RawHttp.Response response = connection.exchange("POST", "/v1/authorizations",
                    Map.of("Content-Type", "application/json", "Idempotency-Key", key), Http.VALID_BODY);
            assertThat(response.status(), is(401));
            assertThat("the unread body must not be parsed as a request", response.connectionClose(), is(true));
        }
        assertThat("the key was never taken", Http.post(url(), key, Http.VALID_BODY).statusCode(), is(201));
    }

    @Test
    void pingAndTheHealthListenerNeedNoCredentials() throws Exception {
        assertThat(Http.get(service.business("/ping"), null).body(), is("pong"));
        for (String path : List.of("/health/live", "/health/ready", "/health/startup", "/health", "/metrics")) {
            assertThat(path, Http.get(service.health(path), null).statusCode(), is(200));
        }
    }

    @Test
    void unknownPathsAreRefusedBeforeTheyAreLookedUp() throws Exception {
        assertThat(Http.get(service.business("/v1/refunds"), null).statusCode(), is(401));
        assertThat(Http.get(service.business("/v1/refunds")).statusCode(), is(404));
    }

    @Test
    void postingWithAnotherMerchantsIdIsForbiddenCountedAndTakesNoKey() throws Exception {
        double before = failures("merchant_mismatch");
        String key = key();
        HttpResponse<String> forbidden = Http.post(url(), key, otherMerchantsBody());

        assertThat(forbidden.statusCode(), is(403));
        assertThat(forbidden.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
        assertThat(Json.mapper().readTree(forbidden.body()).get("type").asText(), containsString("forbidden"));
        assertThat(Json.mapper().readTree(forbidden.body()).get("errors").get(0).get("pointer").asText(),
                   is("#/merchantId"));
        assertThat(failures("merchant_mismatch") - before, is(1.0));
        assertThat(logs.text(), containsString("Access denied to merchant m_123 (merchant_mismatch): POST "
                                               + "/v1/authorizations"));
        assertThat("nothing claimed", Http.post(url(), key, Http.VALID_BODY).statusCode(), is(201));
    }

    @Test
    void anInvalidBodyIsABadRequestBeforeTheMerchantIsCompared() throws Exception {
        assertThat(post(TestCredentials.AUTHORIZATION, otherMerchantsBody().replace("EUR", "XYZ")).statusCode(),
                   is(400));
    }

    @Test
    void readingAnotherMerchantsAuthorizationIsNotFoundExactlyLikeAnUnknownId() throws Exception {
        HttpResponse<String> created = post(OTHER, otherMerchantsBody());
        assertThat(created.statusCode(), is(201));
        String location = created.headers().firstValue("Location").orElseThrow();
        assertThat("its owner reads it", Http.get(service.business(location), OTHER).statusCode(), is(200));

        RawHttp.Response foreign = rawGet(location);
        RawHttp.Response unknown = rawGet("/v1/authorizations/" + UUID.randomUUID());
        RawHttp.Response foreignHead = rawHead(location);
        RawHttp.Response unknownHead = rawHead("/v1/authorizations/" + UUID.randomUUID());

        assertThat(foreign.status(), is(404));
        assertThat(foreign.body(), is(unknown.body()));
        assertThat(withoutDate(foreign.headers()), is(withoutDate(unknown.headers())));
        assertThat(foreignHead.status(), is(404));
        assertThat(withoutDate(foreignHead.headers()), is(withoutDate(unknownHead.headers())));
        assertThat(foreign.body(), not(containsString(OTHER_MERCHANT)));
    }

    @Test
    void twoMerchantsWithTheSameIdempotencyKeyEachGetTheirOwnAuthorization() throws Exception {
        String key = key();
        HttpResponse<String> mine = Http.post(url(), key, Http.VALID_BODY);
        HttpResponse<String> theirs = Http.post(url(), key, otherMerchantsBody(), OTHER);

        assertThat(mine.statusCode(), is(201));
        assertThat(theirs.statusCode(), is(201));
        assertThat(theirs.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));
        assertThat(Json.mapper().readTree(theirs.body()).get("merchantId").asText(), is(OTHER_MERCHANT));
        assertThat(Json.mapper().readTree(theirs.body()).get("id"), not(Json.mapper().readTree(mine.body()).get("id")));
        // Each replays its own, byte for byte, and neither learns the other used the key.
        assertThat(Http.post(url(), key, Http.VALID_BODY).body(), is(mine.body()));
        assertThat(Http.post(url(), key, otherMerchantsBody(), OTHER).body(), is(theirs.body()));
    }

    @Test
    void replaysStayByteIdenticalWithAuthenticationOn() throws Exception {
        String key = key();
        HttpResponse<String> first = Http.post(url(), key, Http.VALID_BODY);
        HttpResponse<String> replay = Http.post(url(), key, Http.VALID_BODY);
        assertThat(first.statusCode(), is(201));
        assertThat(replay.statusCode(), is(201));
        assertThat(replay.headers().firstValue("Idempotent-Replayed").orElseThrow(), is("true"));
        assertThat(replay.body(), is(first.body()));
        assertThat(replay.headers().firstValue("Location"), is(first.headers().firstValue("Location")));
        String location = first.headers().firstValue("Location").orElseThrow();
        assertThat(Http.get(service.business(location)).body(), is(first.body()));
    }

    private static RawHttp.Response rawGet(String path) throws Exception {
        try (RawHttp connection = RawHttp.connect(service.running().business().port(), null, "get")) {
            return connection.exchange("GET", path, Map.of("Authorization", TestCredentials.AUTHORIZATION), null);
        }
    }

    private static RawHttp.Response rawHead(String path) throws Exception {
        try (RawHttp connection = RawHttp.connect(service.running().business().port(), null, "head")) {
            return connection.exchange("HEAD", path, Map.of("Authorization", TestCredentials.AUTHORIZATION), null);
        }
    }

    private static Map<String, String> withoutDate(Map<String, String> headers) {
        Map<String, String> copy = new TreeMap<>(headers);
        copy.remove("date");
        return copy;
    }
}
