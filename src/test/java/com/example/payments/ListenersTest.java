package com.example.payments;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;

/**
 * Both listeners over the wire on ephemeral ports, started through Main's own wiring: every route answers on its
 * own port and 404 on the other.
 */
class ListenersTest {

    private static TestService service;

    @BeforeAll
    static void start() {
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @Test
    void pingAnswersPongOnTheBusinessPort() throws Exception {
        HttpResponse<String> response = service.get(service.business("/ping"));
        assertThat(response.statusCode(), is(200));
        assertThat(response.body(), is("pong"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/health/live", "/health/ready", "/health/startup", "/health"})
    void probesAnswerJsonWithoutCachingOnTheHealthPort(String path) throws Exception {
        HttpResponse<String> response = service.get(service.health(path));
        assertThat(response.statusCode(), is(200));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), startsWith("application/json"));
        assertThat(response.headers().firstValue("Cache-Control").orElseThrow(), is("no-store"));
        assertThat(response.body(), startsWith("{\"status\":"));
    }

    @Test
    void metricsAnswerPrometheusTextOnTheHealthPort() throws Exception {
        HttpResponse<String> response = service.get(service.health("/metrics"));
        assertThat(response.statusCode(), is(200));
        assertThat(response.body(), containsString("authorizer_invocations_total"));
        assertThat(response.body(), containsString("http_in_flight_requests"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/ping", "/v1/authorizations/some-id", "/v1/authorizations"})
    void businessPathsAreNotFoundOnTheHealthPort(String path) throws Exception {
        assertThat(service.get(service.health(path)).statusCode(), is(404));
        HttpResponse<String> post = Http.client().send(HttpRequest.newBuilder(URI.create(service.health(path)))
                                                               .POST(HttpRequest.BodyPublishers.noBody()).build(),
                                                       HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode(), is(404));
        // The health port takes no request body at all.
        assertThat(Http.post(service.health("/v1/authorizations"), "k", Http.VALID_BODY).statusCode(), is(413));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/health/live", "/health/ready", "/health/startup", "/health", "/metrics",
            "/observe/metrics", "/observe/health"})
    void healthAndMetricsPathsAreNotFoundOnTheBusinessPort(String path) throws Exception {
        HttpResponse<String> response = service.get(service.business(path));
        assertThat(response.statusCode(), is(404));
        assertThat(response.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
    }

    @Test
    void anHttp10RequestIsRefusedWithAProblemNotAServerError() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", service.running().business().port())) {
            socket.getOutputStream().write("GET /ping HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertThat(answer, startsWith("HTTP/1.1 505 "));
            assertThat(answer, containsString("application/problem+json"));
        }
    }

    @Test
    void observeEndpointsAreNotMountedOnTheHealthPortEither() throws Exception {
        assertThat(service.get(service.health("/observe/metrics")).statusCode(), is(404));
        assertThat(service.get(service.health("/observe/health")).statusCode(), is(404));
    }
}
