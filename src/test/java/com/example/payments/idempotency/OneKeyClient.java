package com.example.payments.idempotency;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import com.example.payments.http.Json;
import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The client of one idempotency key through a fault: sends one request (a unique reference, so its records can be
 * found), keeps every answer, retries like a well-behaved client until it gets its 201, and checks the promise that
 * no card is authorized twice: every 201 for the key carries the same id and a byte-identical body, and {@code GET}
 * finds exactly that authorization.
 */
final class OneKeyClient {

    /**
     * One answer.
     *
     * @param replica  who answered
     * @param status   HTTP status, 0 when there was no answer
     * @param body     the body
     * @param replayed {@code Idempotent-Replayed: true}
     * @param headers  response headers (first values, lower case)
     */
    record Answer(String replica, int status, String body, boolean replayed, Map<String, String> headers) {
    }

    private static final Duration RETRY_FOR = Duration.ofSeconds(20);

    private final String key = UUID.randomUUID().toString();
    private final String reference = "fault-" + UUID.randomUUID();
    private final String body = Http.VALID_BODY.replace("order-42", reference);
    private final List<Answer> answers = new CopyOnWriteArrayList<>();
    private final Timeline timeline;

    OneKeyClient(Timeline timeline) {
        this.timeline = timeline;
    }

    String key() {
        return key;
    }

    String reference() {
        return reference;
    }

    List<Answer> answers() {
        return List.copyOf(answers);
    }

    /**
     * Sends the request on a thread of its own.
     *
     * @param replica where
     * @param name    its name in the timeline
     * @return the answer (status 0 when the connection failed)
     */
    CompletableFuture<Answer> sendAsync(ServiceProcess replica, String name) {
        return CompletableFuture.supplyAsync(() -> send(replica, name));
    }

    /**
     * Sends the request.
     *
     * @param replica where
     * @param name    its name in the timeline
     * @return the answer (status 0 when the connection failed)
     */
    Answer send(ServiceProcess replica, String name) {
        timeline.add(name, "POST to :" + replica.businessPort());
        Answer answer;
        try {
            HttpResponse<String> response = Http.client().send(HttpRequest.newBuilder(URI.create(
                            "http://127.0.0.1:" + replica.businessPort() + "/v1/authorizations"))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json").header("Idempotency-Key", key)
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            Map<String, String> headers = new HashMap<>();
            response.headers().map().forEach((header, values) -> headers.put(header.toLowerCase(), values.getFirst()));
            answer = new Answer(name, response.statusCode(), response.body(),
                                "true".equals(headers.get("idempotent-replayed")), headers);
        } catch (IOException e) {
            answer = new Answer(name, 0, String.valueOf(e), false, Map.of());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer = new Answer(name, 0, "interrupted", false, Map.of());
        }
        answers.add(answer);
        timeline.add(name, answer.status() + (answer.replayed() ? " replayed " : " ") + answer.body());
        return answer;
    }

    /**
     * Retries, round robin over the replicas still running, until a 201 (a well-behaved client: same key, same body,
     * a pause after each 409, 503 or 504).
     *
     * @param replicas where to retry
     * @return the 201
     * @throws InterruptedException when interrupted
     */
    Answer retryUntilCreated(List<ServiceProcess> replicas) throws InterruptedException {
        long deadline = System.nanoTime() + RETRY_FOR.toNanos();
        for (int i = 0; System.nanoTime() < deadline; i++) {
            List<ServiceProcess> alive = replicas.stream().filter(ServiceProcess::alive).toList();
            Answer answer = send(alive.get(i % alive.size()), "retry-" + (i + 1));
            if (answer.status() == 201) {
                return answer;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("no 201 within " + RETRY_FOR + ": " + answers);
    }

    /**
     * The promise: at least one 201; every 201 for the key carries the same id and the same bytes; no answer is a
     * 500; {@code GET} of the id on every given replica answers those bytes.
     *
     * @param readers replicas to read back from
     * @return the id
     * @throws Exception when a read fails
     */
    String assertOneAuthorization(List<ServiceProcess> readers) throws Exception {
        List<Answer> created = answers.stream().filter(answer -> answer.status() == 201).toList();
        assertThat("a 201 for the key: " + answers, created, not(empty()));
        String first = created.getFirst().body();
        assertThat("every 201 byte-identical: " + answers, created.stream().map(Answer::body).toList(),
                   everyItem(is(first)));
        assertThat("never a 500: " + answers, answers.stream().filter(answer -> answer.status() == 500).toList(),
                   is(empty()));
        String id = Json.mapper().readTree(first).path("id").asText();
        for (ServiceProcess reader : readers) {
            HttpResponse<String> read = Http.get("http://127.0.0.1:" + reader.businessPort() + "/v1/authorizations/"
                                                 + id);
            assertThat(read.statusCode(), is(200));
            assertThat(read.body(), is(first));
        }
        return id;
    }

    /**
     * The store holds exactly one authorization for this request: the Redis records under the prefix that carry its
     * reference.
     *
     * @param redis the test's Redis
     */
    void assertOneRecordIn(RedisServer redis) {
        List<String> values = RedisScan.valuesUnder(redis.uri(), "payments-authorization:authorization:");
        List<String> ours = new ArrayList<>();
        for (String value : values) {
            if (value.contains(reference)) {
                ours.add(value);
            }
        }
        assertThat("authorization records of " + reference, ours, hasSize(1));
    }

    /**
     * Decisions the authorizer made on these replicas (approved or declined; an unknown outcome is no decision).
     *
     * @param replicas running replicas
     * @return the sum
     * @throws Exception when a scrape fails
     */
    static double decided(List<ServiceProcess> replicas) throws Exception {
        double sum = 0;
        for (ServiceProcess replica : replicas) {
            MetricsScrape metrics = MetricsScrape.of(replica.healthPort());
            sum += metrics.sum("authorizer_invocations_total", Map.of("outcome", "approved"))
                   + metrics.sum("authorizer_invocations_total", Map.of("outcome", "declined"));
        }
        return sum;
    }

    /**
     * Authorizations the issuer built into these replicas ({@code authorizer.type: rule-based}) made: one per attempt
     * id, whatever the number of calls ({@code issuer_authorizations_total}).
     *
     * @param replicas running replicas
     * @return the sum
     * @throws Exception when a scrape fails
     */
    static double issuerAuthorizations(List<ServiceProcess> replicas) throws Exception {
        double sum = 0;
        for (ServiceProcess replica : replicas) {
            sum += MetricsScrape.of(replica.healthPort()).sum("issuer_authorizations_total");
        }
        return sum;
    }

    /**
     * Decisions recorded first by these replicas ({@code authorizations_total}): one per authorization, however many
     * executions converged on it.
     *
     * @param replicas running replicas
     * @return the sum
     * @throws Exception when a scrape fails
     */
    static double recorded(List<ServiceProcess> replicas) throws Exception {
        double sum = 0;
        for (ServiceProcess replica : replicas) {
            sum += MetricsScrape.of(replica.healthPort()).sum("authorizations_total");
        }
        return sum;
    }

    /**
     * Waits until a replica has claimed this many keys: the request is past its claim, about to call the authorizer.
     *
     * @param replica the replica
     * @param claims  {@code idempotency_requests_total{outcome="new"}} to reach
     * @throws Exception when it does not within 15 s
     */
    static void awaitClaims(ServiceProcess replica, double claims) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (MetricsScrape.of(replica.healthPort()).sum("idempotency_requests_total", Map.of("outcome", "new"))
               < claims) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no claim within 15 s");
            }
            Thread.sleep(10);
        }
    }
}
