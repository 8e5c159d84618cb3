package com.example.payments;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.OpenApiContract;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The OpenAPI document: served by Helidon's OpenAPI feature on the health listener only, and strict enough that a
 * response drifting from it fails {@link OpenApiContract}, which checks every business response the tests receive.
 */
class OpenApiTest {

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
    void theHealthListenerServesTheDocumentAndTheBusinessListenerDoesNot() throws Exception {
        String document;
        try (InputStream in = Main.class.getClassLoader().getResourceAsStream(OpenApiContract.DOCUMENT)) {
            document = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        HttpResponse<String> yaml = Http.get(service.health("/openapi"), null);
        assertThat(yaml.statusCode(), is(200));
        assertThat(yaml.headers().firstValue("Content-Type").orElseThrow(), containsString("application/vnd.oai.openapi"));
        assertThat(yaml.body(), is(document));
        HttpResponse<String> json = send(HttpRequest.newBuilder(URI.create(service.health("/openapi")))
                                                 .header("Accept", "application/json").GET());
        assertThat(json.statusCode(), is(200));
        assertThat(Json.mapper().readTree(json.body()).path("openapi").asText(), is("3.1.0"));
        HttpResponse<String> head = send(HttpRequest.newBuilder(URI.create(service.health("/openapi")))
                                                 .method("HEAD", HttpRequest.BodyPublishers.noBody()));
        assertThat(head.statusCode(), is(200));
        assertThat(head.headers().firstValue("Content-Length").orElseThrow(),
                   is(String.valueOf(document.getBytes(StandardCharsets.UTF_8).length)));

        HttpResponse<String> business = Http.get(service.business("/openapi"));
        assertThat(business.statusCode(), is(404));
    }

    @Test
    void everyBusinessResponseOfTheTestsIsChecked() throws Exception {
        long before = OpenApiContract.checked();
        Http.get(service.business("/ping"));
        Http.post(service.business("/v1/authorizations"), "openapi-1", Http.VALID_BODY);
        assertThat(OpenApiContract.checked() - before, is(2L));
        assertThat(OpenApiContract.checked(), greaterThan(0L));
    }

    @Test
    void aServerThatGetsTheFreedPortOfAStoppedServiceIsNotCheckedAgainstTheDocument() throws Exception {
        TestService stopped = TestService.start(Map.of());
        int port = stopped.running().business().port();
        stopped.close();
        // What the issuer simulator answers, on the port the OS may hand out again: not the product's contract.
        String stats = "{\"decisions\":3}";
        Map<String, String> headers = Map.of("content-type", "application/json");
        long before = OpenApiContract.checked();
        OpenApiContract.check("GET", port, "/stats", 200, name(headers), stats);
        OpenApiContract.check("POST", port, "/v1/authorizations", 200, name(headers), stats);
        assertThat(OpenApiContract.checked() - before, is(0L));
    }

    @Test
    void aListenerThatStoppedWithoutSayingSoIsNotChecked() {
        java.util.concurrent.atomic.AtomicBoolean serving = new java.util.concurrent.atomic.AtomicBoolean(true);
        int port = 1;
        try (OpenApiContract.Registration registration = OpenApiContract.businessListener(port, serving::get)) {
            Map<String, String> headers = Map.of("content-type", "application/json");
            assertThrows(AssertionError.class,
                         () -> OpenApiContract.check("GET", port, "/stats", 200, name(headers), "{}"));
            serving.set(false);
            OpenApiContract.check("GET", port, "/stats", 200, name(headers), "{}");
            // A newer listener on the port stays registered when the older registration is closed late.
            serving.set(true);
            try (OpenApiContract.Registration newer = OpenApiContract.businessListener(port, serving::get)) {
                registration.close();
                assertThrows(AssertionError.class,
                             () -> OpenApiContract.check("GET", port, "/stats", 200, name(headers), "{}"));
            }
            OpenApiContract.check("GET", port, "/stats", 200, name(headers), "{}");
        }
    }

    @Test
    void aResponseThatDriftsFromTheDocumentFails() {
        int port = service.running().business().port();
        String problem = "{\"type\":\"https://payments.example.com/problems/not-found\",\"title\":\"Not found\","
                         + "\"status\":404,\"detail\":\"x\",\"requestId\":\"0af7651916cd43dd8448eb211c80319c\"}";
        Map<String, String> headers = Map.of("content-type", "application/problem+json",
                                             "x-request-id", "0af7651916cd43dd8448eb211c80319c");
        // As documented: passes.
        OpenApiContract.check("GET", port, "/v1/authorizations/x", 404, name(headers), problem);
        // A status the operation does not document.
        assertThrows(AssertionError.class, () -> OpenApiContract.check("GET", port, "/v1/authorizations/x", 418,
                                                                       name(headers), problem));
        // No X-Request-Id.
        assertThrows(AssertionError.class, () -> OpenApiContract.check("GET", port, "/v1/authorizations/x", 404,
                name(Map.of("content-type", "application/problem+json")), problem));
        // A member the schema does not have, a problem type it does not know, a requestId unlike the header.
        for (String drifted : new String[] {problem.replace("}", ",\"stack\":\"at Foo\"}"),
                problem.replace("not-found", "not-there"),
                problem.replace("0af7651916cd43dd8448eb211c80319c\"}", "1af7651916cd43dd8448eb211c80319c\"}")}) {
            assertThrows(AssertionError.class, () -> OpenApiContract.check("GET", port, "/v1/authorizations/x", 404,
                                                                           name(headers), drifted));
        }
        // A 201 without its Location, or with a card number field.
        String created = "{\"id\":\"0a6a3f0e-3d7d-8b2c-9f1e-4c5d6e7f8a9b\",\"status\":\"APPROVED\","
                         + "\"merchantId\":\"m_123\",\"amount\":{\"value\":1,\"currency\":\"EUR\"},"
                         + "\"card\":{\"brand\":\"visa\",\"last4\":\"1111\"},\"createdAt\":\"2026-01-01T00:00:00.000Z\","
                         + "\"state\":\"APPROVED\",\"capturedAmount\":{\"value\":0,\"currency\":\"EUR\"},\"captures\":[],"
                         + "\"expiresAt\":\"2026-01-08T00:00:00.000Z\",\"updatedAt\":\"2026-01-01T00:00:00.000Z\"}";
        Map<String, String> createdHeaders = Map.of("content-type", "application/json",
                "x-request-id", "0af7651916cd43dd8448eb211c80319c",
                "location", "/v1/authorizations/0a6a3f0e-3d7d-8b2c-9f1e-4c5d6e7f8a9b");
        OpenApiContract.check("POST", port, "/v1/authorizations", 201, name(createdHeaders), created);
        assertThrows(AssertionError.class, () -> OpenApiContract.check("POST", port, "/v1/authorizations", 201,
                name(Map.of("content-type", "application/json", "x-request-id", "0af7651916cd43dd8448eb211c80319c")),
                created));
        assertThrows(AssertionError.class, () -> OpenApiContract.check("POST", port, "/v1/authorizations", 201,
                name(createdHeaders), created.replace("\"last4\":\"1111\"", "\"last4\":\"1111\",\"number\":\"4111\"")));
    }

    private static java.util.function.Function<String, Optional<String>> name(Map<String, String> headers) {
        return name -> Optional.ofNullable(headers.get(name.toLowerCase(java.util.Locale.ROOT)));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
