package com.example.payments;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import com.example.payments.http.Json;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * {@code /metrics} and {@code /openapi} on the health listener: a query or an {@code Accept} they do not take is a
 * problem (400, 406), an empty selection of meters a 404 problem, and {@code HEAD} answers the status {@code GET}
 * does, in every case (RFC 9110 section 9.3.2); what Prometheus sends still gets the exposition.
 */
class ObserverRequestsTest {

    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private static TestService service;

    @BeforeAll
    static void start() {
        service = TestService.start(Map.of());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @ParameterizedTest(name = "{0} Accept [{1}] -> {2}")
    @CsvSource(delimiter = '|', value = {
            "/metrics                   |                                         | 200 | ",
            "/metrics                   | application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2 | 200 | ",
            "/metrics?scope=application |                                         | 200 | ",
            "/metrics?scope=bogus       |                                         | 400 | bad-request",
            "/metrics?x=1               |                                         | 400 | bad-request",
            "/metrics?scope             |                                         | 400 | bad-request",
            "/metrics?scope=            |                                         | 400 | bad-request",
            "/metrics?name              |                                         | 400 | bad-request",
            "/metrics?scope=base&scope=application |                              | 200 | ",
            "/metrics?scope=base&scope=bogus |                                    | 400 | bad-request",
            "/metrics?scope=vendor&scope |                                        | 400 | bad-request",
            "/metrics?name=x&name       |                                         | 400 | bad-request",
            "/metrics?scope=base&       |                                         | 400 | bad-request",
            "/openapi?format=json&format |                                        | 400 | bad-request",
            "/openapi?format&format=json |                                        | 400 | bad-request",
            "/metrics?name=nosuch       |                                         | 404 | not-found",
            "/metrics                   | text/html                               | 406 | not-acceptable",
            "/metrics                   | application/problem+json                | 406 | not-acceptable",
            "/metrics/                  |                                         | 404 | not-found",
            "/metrics/application       |                                         | 404 | not-found",
            "/metrics/?x=1              |                                         | 404 | not-found",
            "/openapi                   |                                         | 200 | ",
            "/openapi?format=json       |                                         | 200 | ",
            "/openapi                   | application/json                        | 200 | ",
            "/openapi?format=xml        |                                         | 400 | bad-request",
            "/openapi?x=1               |                                         | 400 | bad-request",
            "/openapi?format            |                                         | 400 | bad-request",
            "/openapi?format=json&format=yaml |                                   | 400 | bad-request",
            "/openapi?format=YAML       | application/json                        | 200 | ",
            "/openapi                   | text/plain                              | 406 | not-acceptable",
            "/openapi                   | */*;q=0                                 | 406 | not-acceptable",
    })
    void getAndHeadAnswerAlikeAndEveryErrorIsAProblem(String target, String accept, int status, String type)
            throws Exception {
        HttpResponse<String> get = send("GET", target, accept);
        HttpResponse<String> head = send("HEAD", target, accept);
        assertThat(target + " GET", get.statusCode(), is(status));
        assertThat(target + " HEAD", head.statusCode(), is(status));
        if (status >= 400) {
            assertThat(get.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
            assertThat(Json.mapper().readTree(get.body()).get("type").asText(), containsString("/problems/" + type));
        } else {
            assertThat(head.headers().firstValue("X-Content-Type-Options").orElse(""), is("nosniff"));
        }
    }

    @Test
    void theSelectedScopeIsServed() throws Exception {
        HttpResponse<String> application = send("GET", "/metrics?scope=application", null);
        assertThat(application.body(), containsString("scope=\"application\""));
    }

    @ParameterizedTest(name = "{0} Accept [{1}] -> {2}")
    @CsvSource(delimiter = '|', value = {
            "/openapi             |                                     | application/vnd.oai.openapi",
            "/openapi             | application/json                    | application/json",
            "/openapi             | application/vnd.oai.openapi+json    | application/vnd.oai.openapi+json",
            "/openapi             | application/yaml                    | application/yaml",
            "/openapi             | text/yaml;q=0.5, application/json   | application/json",
            "/openapi?format=json | application/yaml                    | application/json",
            "/openapi?format=YAML | application/json                    | application/vnd.oai.openapi",
    })
    void headOfTheOpenApiDocumentSendsTheHeadersOfGet(String target, String accept, String type) throws Exception {
        HttpResponse<String> get = send("GET", target, accept);
        HttpResponse<String> head = send("HEAD", target, accept);
        assertThat(get.statusCode(), is(200));
        assertThat(head.statusCode(), is(200));
        assertThat(get.headers().firstValue("Content-Type").orElseThrow(), is(type));
        assertThat(head.headers().firstValue("Content-Type").orElseThrow(), is(type));
        assertThat(head.headers().firstValueAsLong("Content-Length").orElseThrow(),
                   is((long) get.body().getBytes(StandardCharsets.UTF_8).length));
    }

    private static HttpResponse<String> send(String method, String target, String accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(service.health(target)))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (accept != null && !accept.isBlank()) {
            request.header("Accept", accept);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
