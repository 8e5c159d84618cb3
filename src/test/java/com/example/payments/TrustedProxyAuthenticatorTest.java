package com.example.payments;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.example.payments.authentication.Authentication;
import com.example.payments.authentication.Authenticator;
import com.example.payments.authentication.Caller;
import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.TestCredentials;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;

/**
 * The authentication seam swapped for a gateway's identity, as a fork whose ingress or mesh authenticates callers
 * would: the merchant comes from a header that only a trusted proxy can set (requests from any other address are
 * refused). Wired through {@code Main.start(..., authenticator, ...)}; nothing in the authorization package knows,
 * and every merchant rule (403, 404, scoped keys) holds as it does with API keys.
 */
class TrustedProxyAuthenticatorTest {

    /** The identity header the gateway sets after authenticating the caller (and strips from what callers send). */
    static final HeaderName MERCHANT = HeaderNames.create("X-Authenticated-Merchant");

    /**
     * Trusts {@link #MERCHANT} only on connections from the proxy's addresses: anyone else reaching the port could
     * set it too. The template for a fork's own (mTLS would read {@code request.remotePeer().tlsCertificates()}).
     */
    static final class TrustedProxyAuthenticator implements Authenticator {
        private static final String CHALLENGE = "Bearer realm=\"payments-authorization\"";
        private final Set<InetAddress> proxies;

        TrustedProxyAuthenticator(Set<InetAddress> proxies) {
            this.proxies = Set.copyOf(proxies);
        }

        @Override
        public Authentication authenticate(ServerRequest request) {
            List<String> merchant = request.headers().all(MERCHANT, List::of);
            if (!(request.remotePeer().address() instanceof java.net.InetSocketAddress peer)
                || !proxies.contains(peer.getAddress())) {
                return new Authentication.Refused("untrusted_peer", CHALLENGE);
            }
            if (merchant.isEmpty()) {
                return new Authentication.Refused(Authentication.MISSING, CHALLENGE);
            }
            if (merchant.size() > 1 || merchant.getFirst().isBlank()) {
                return new Authentication.Refused(Authentication.MALFORMED, CHALLENGE);
            }
            return new Authentication.Authenticated(new Caller(merchant.getFirst()));
        }
    }

    private static TestService service;

    @BeforeAll
    static void start() throws UnknownHostException {
        service = TestService.start(Map.of(), new TrustedProxyAuthenticator(
                Set.of(InetAddress.getByName("127.0.0.1"))));
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    private static HttpResponse<String> post(String merchant, String idempotencyKey, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(service.business("/v1/authorizations")))
                .header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (merchant != null) {
            request.header(MERCHANT.defaultCase(), merchant);
        }
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String body(String merchant) {
        return Http.VALID_BODY.replace("m_123", merchant);
    }

    @Test
    void theProxysIdentityAuthorizesThatMerchant() throws Exception {
        HttpResponse<String> created = post("m_789", UUID.randomUUID().toString(), body("m_789"));
        assertThat(created.body(), created.statusCode(), is(201));
        assertThat(Json.mapper().readTree(created.body()).get("merchantId").asText(), is("m_789"));
    }

    @Test
    void withoutTheHeaderTheRequestIsUnauthorizedAndApiKeysNoLongerCount() throws Exception {
        HttpResponse<String> refused = Http.post(service.business("/v1/authorizations"), UUID.randomUUID().toString(),
                                                 Http.VALID_BODY, TestCredentials.AUTHORIZATION);
        assertThat(refused.statusCode(), is(401));
        assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow(), startsWith("Bearer"));
        assertThat(service.metric("auth_failures_total", Map.of("reason", "missing")) >= 1, is(true));
    }

    @Test
    void theMerchantRulesHoldWhateverAuthenticatedTheCaller() throws Exception {
        String key = UUID.randomUUID().toString();
        assertThat("403: another merchant's id", post("m_789", key, body("m_790")).statusCode(), is(403));
        HttpResponse<String> mine = post("m_789", key, body("m_789"));
        HttpResponse<String> theirs = post("m_790", key, body("m_790"));
        assertThat(mine.statusCode(), is(201));
        assertThat("scoped keys: their own 201", theirs.statusCode(), is(201));
        assertThat(theirs.headers().firstValue("Idempotent-Replayed").isPresent(), is(false));

        String location = mine.headers().firstValue("Location").orElseThrow();
        HttpRequest.Builder read = HttpRequest.newBuilder(URI.create(service.business(location)));
        assertThat(Http.client().send(read.copy().header(MERCHANT.defaultCase(), "m_789").build(),
                                      HttpResponse.BodyHandlers.ofString()).statusCode(), is(200));
        assertThat("404 for another merchant", Http.client().send(read.header(MERCHANT.defaultCase(), "m_790").build(),
                                                                  HttpResponse.BodyHandlers.ofString()).statusCode(),
                   is(404));
    }

    @Test
    void aRequestFromAnAddressThatIsNotTheProxyIsRefusedWhateverItClaims() throws Exception {
        // 127.0.0.2 is loopback too on Linux, but not the proxy's address.
        HttpClient elsewhere = HttpClient.newBuilder().localAddress(InetAddress.getByName("127.0.0.2")).build();
        double before = service.metric("auth_failures_total", Map.of("reason", "untrusted_peer"));
        HttpRequest request = HttpRequest.newBuilder(URI.create(service.business("/v1/authorizations")))
                .header("Content-Type", "application/json").header("Idempotency-Key", "k")
                .header(MERCHANT.defaultCase(), "m_123")
                .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)).build();
        assertThat(elsewhere.send(request, HttpResponse.BodyHandlers.ofString()).statusCode(), is(401));
        assertThat(service.metric("auth_failures_total", Map.of("reason", "untrusted_peer")) - before, is(1.0));
    }
}
