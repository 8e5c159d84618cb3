package com.example.payments.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Small wrapper over the JDK {@link HttpClient} for tests: one shared client, short timeouts, string bodies, the
 * development API key ({@link TestCredentials}) unless a test says otherwise; every response it receives from a
 * business listener is checked against the OpenAPI document ({@link OpenApiContract}).
 */
public final class Http {

    /** A valid authorization body for the approving test card. */
    public static final String VALID_BODY = """
            {"merchantId":"m_123","reference":"order-42",
             "amount":{"value":1299,"currency":"EUR"},
             "card":{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}""";

    // Every response from a business listener is checked against the OpenAPI document (OpenApiContract).
    private static final HttpClient CLIENT = new ContractCheckingClient(HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .version(HttpClient.Version.HTTP_1_1)
            .build());

    private Http() {
    }

    /**
     * GET.
     *
     * @param uri full URI
     * @return response
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public static HttpResponse<String> get(String uri) throws IOException, InterruptedException {
        return get(uri, TestCredentials.AUTHORIZATION);
    }

    /**
     * GET with the given credentials.
     *
     * @param uri           full URI
     * @param authorization {@code Authorization} header value, or {@code null} to send none
     * @return response
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public static HttpResponse<String> get(String uri, String authorization) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(20)).GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * POST of a JSON authorization.
     *
     * @param uri            full URI
     * @param idempotencyKey header value, or {@code null} to omit it
     * @param body           JSON body
     * @return response
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public static HttpResponse<String> post(String uri, String idempotencyKey, String body)
            throws IOException, InterruptedException {
        return post(uri, idempotencyKey, body, TestCredentials.AUTHORIZATION);
    }

    /**
     * POST of a JSON authorization with the given credentials.
     *
     * @param uri            full URI
     * @param idempotencyKey header value, or {@code null} to omit it
     * @param body           JSON body
     * @param authorization  {@code Authorization} header value, or {@code null} to send none
     * @return response
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public static HttpResponse<String> post(String uri, String idempotencyKey, String body, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = authorized(HttpRequest.newBuilder(URI.create(uri)), authorization)
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A request builder with the test configuration's development key ({@link TestCredentials#AUTHORIZATION}).
     *
     * @param uri full URI
     * @return the builder
     */
    public static HttpRequest.Builder request(String uri) {
        return authorized(HttpRequest.newBuilder(URI.create(uri)), TestCredentials.AUTHORIZATION);
    }

    private static HttpRequest.Builder authorized(HttpRequest.Builder request, String authorization) {
        return authorization == null ? request : request.header("Authorization", authorization);
    }

    /**
     * Sends authorized POSTs of one body under one Idempotency-Key, released together (each on a virtual thread of its
     * own, after all are built), and waits for every answer.
     *
     * @param uris    one per request, where it goes
     * @param key     the Idempotency-Key of every request
     * @param body    the JSON body of every request
     * @param timeout how long each request may take
     * @return the answers, in the order of {@code uris}
     * @throws Exception when a request fails or times out
     */
    public static List<HttpResponse<String>> postAtOnce(List<String> uris, String key, String body, Duration timeout)
            throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> pending = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (String uri : uris) {
                HttpRequest request = request(uri).timeout(timeout).header("Content-Type", "application/json")
                        .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build();
                pending.add(threads.submit(() -> {
                    start.await();
                    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
                }));
            }
            start.countDown();
        }
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (Future<HttpResponse<String>> response : pending) {
            responses.add(response.get());
        }
        return responses;
    }

    /**
     * A client of its own (its own connection pool), checked against the OpenAPI document like {@link #client()}:
     * for a test whose early answers close connections, so that no later request finds a closed pooled one.
     *
     * @return a new HTTP/1.1 client with a 5 s connect timeout
     */
    public static HttpClient newClient() {
        return new ContractCheckingClient(HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .version(HttpClient.Version.HTTP_1_1)
                .build());
    }

    /**
     * The shared client, for requests the helpers above do not cover.
     *
     * @return client
     */
    public static HttpClient client() {
        return CLIENT;
    }
}
