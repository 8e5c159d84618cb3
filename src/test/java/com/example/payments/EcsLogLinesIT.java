package com.example.payments;

import java.io.File;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.lifecycle.HangingShutdownResource;
import com.example.payments.testing.BuiltJar;
import com.example.payments.testing.Http;
import com.example.payments.testing.Leftovers;
import com.example.payments.testing.TestCredentials;
import com.example.payments.testing.CardNumbers;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The packaged jar with {@code logging.format: json}, from its start to exit 0: an approved authorization, a 4xx, an
 * exception logged with its stack trace (a shutdown resource whose close fails, quoting card numbers) and a SIGTERM.
 * Every line it wrote on stdout, the first included, is one JSON object with the ECS fields ({@code @timestamp} in UTC
 * with its zone, {@code log.level}, {@code log.logger}, {@code process.thread.name}, {@code message},
 * {@code service.*}), the request's lines carry its id, the access-log lines their structured fields, the exception's
 * line its {@code error.*} fields, and no line holds a card number. The JVM's own logging goes to stderr, as in the
 * image.
 */
class EcsLogLinesIT {

    private static final Pattern STARTED = Pattern.compile(
            "serving business traffic on port (\\d+), health probes and metrics on port (\\d+)");
    private static final List<String> FIELDS = List.of("@timestamp", "log.level", "log.logger",
                                                       "process.thread.name", "message", "service.name",
                                                       "service.version", "service.environment");

    @Test
    void everyStdoutLineIsAnEcsJsonObjectWithoutACardNumber(@TempDir Path dir) throws Exception {
        Path stdout = dir.resolve("stdout");
        Path stderr = dir.resolve("stderr");
        Process process = new ProcessBuilder(command()).redirectOutput(stdout.toFile()).redirectError(stderr.toFile())
                .start();
        Leftovers.Handle tracked = Leftovers.track("EcsLogLinesIT service pid " + process.pid(),
                                                   process::destroyForcibly);
        try {
            Matcher ports = awaitStarted(stdout, process);
            awaitReady(Integer.parseInt(ports.group(2)));
            String api = "http://127.0.0.1:" + ports.group(1) + "/v1/authorizations";
            HttpResponse<String> created = Http.post(api, "ecs-1", Http.VALID_BODY);
            assertThat(created.body(), created.statusCode(), is(201));
            HttpResponse<String> missing = Http.client().send(Http.request(api + "/4111111111111111").GET().build(),
                                                              HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode(), is(404));
            HttpResponse<String> unauthenticated = Http.client().send(
                    HttpRequest.newBuilder(URI.create(api + "/x")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(unauthenticated.statusCode(), is(401));

            new ProcessBuilder("kill", "-TERM", String.valueOf(process.pid())).start().waitFor();
            assertThat("exited in time", process.waitFor(60, TimeUnit.SECONDS), is(true));
            assertThat(process.exitValue(), is(0));
        } finally {
            process.destroyForcibly();
            tracked.close();
        }

        List<String> lines = Files.readAllLines(stdout, StandardCharsets.UTF_8);
        assertThat("the service logged", lines.size() > 10, is(true));
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            JsonNode event = Json.mapper().readTree(line);
            assertThat(line, event.isObject(), is(true));
            for (String field : FIELDS) {
                assertThat(line + " has " + field, event.path(field).asText(), not(is("")));
            }
            assertMatches(line, event.path("@timestamp").asText(),
                          "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
            assertMatches(line, event.path("log.level").asText(), "ERROR|WARN|INFO|DEBUG|TRACE");
            assertThat(line, event.path("service.name").asText(), is("payments-authorization"));
            assertThat(line, event.path("service.environment").asText(), is("dev"));
            events.add(event);
        }
        assertThat(cardNumbersIn(lines), is(empty()));

        List<JsonNode> access = events.stream()
                .filter(event -> event.path("log.logger").asText().endsWith("observability.AccessLog")).toList();
        assertThat(access.toString(), access.size(), is(3));
        JsonNode approved = access.getFirst();
        assertThat(approved.toString(), approved.path("http.request.method").asText(), is("POST"));
        assertThat(approved.toString(), approved.path("http.route").asText(), is("/v1/authorizations"));
        assertThat(approved.toString(), approved.path("http.response.status_code").asInt(), is(201));
        assertThat(approved.toString(), approved.path("event.duration").isIntegralNumber(), is(true));
        assertThat(approved.toString(), approved.path("merchant.id").asText(), is(TestCredentials.MERCHANT));
        assertMatches(approved.toString(), approved.path("http.request.id").asText(), "[0-9a-f]{32}");
        assertThat(access.get(1).toString(), access.get(1).path("http.route").asText(),
                   is("/v1/authorizations/{id}"));
        assertThat(access.get(1).path("http.response.status_code").asInt(), is(404));
        assertThat(access.get(2).path("http.response.status_code").asInt(), is(401));

        JsonNode failed = events.stream().filter(event -> event.path("message").asText()
                .contains("Closing test-hanging-resource failed")).findFirst().orElseThrow();
        assertThat(failed.toString(), failed.path("log.level").asText(), is("WARN"));
        assertThat(failed.toString(), failed.path("error.type").asText(), is("java.lang.IllegalStateException"));
        assertThat(failed.toString(), failed.path("error.message").asText(),
                   is("close failed for card **** **** **** 1111"));
        assertThat(failed.toString(), failed.path("error.stack_trace").asText(),
                   containsString("Caused by: java.lang.IllegalArgumentException: bad card ************4444"));
        assertThat(events.getLast().path("message").asText(), containsString("exiting with status 0"));
        assertThat("the JVM's own messages are not on stdout", Files.readString(stderr), not(containsString("{\"@")));
    }

    private static void assertMatches(String reason, String value, String regex) {
        assertThat(reason + ": " + value, value.matches(regex), is(true));
    }

    private static List<String> command() {
        Path jar = BuiltJar.path();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xlog:all=off", "-Xlog:all=warning:stderr",
                "-Dwarm-up.requests=0", "-Dserver.port=0", "-Dhealth-server.port=0", "-Dlogging.format=json",
                "-D" + HangingShutdownResource.PROPERTY + "=fail"));
        TestCredentials.config().forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.addAll(List.of("-cp", String.join(File.pathSeparator, jar.toString(),
                                                   Path.of("target", "libs", "*").toString(),
                                                   Path.of("target", "test-classes").toString()),
                               "com.example.payments.Main"));
        return command;
    }

    private static Matcher awaitStarted(Path stdout, Process process) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline && process.isAlive()) {
            Matcher matcher = STARTED.matcher(Files.readString(stdout));
            if (matcher.find()) {
                return matcher;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the service did not start: " + Files.readString(stdout));
    }

    private static void awaitReady(int healthPort) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (Http.get("http://127.0.0.1:" + healthPort + "/health/ready").statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException notYet) {
                // the listener is bound; a refused or reset connection is tried again
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the service did not become ready");
    }

    // Every line holding a Luhn-valid run of 13 to 19 digits, apart by at most one space or dash.
    private static List<String> cardNumbersIn(List<String> lines) {
        List<String> found = new ArrayList<>();
        for (String line : lines) {
            if (CardNumbers.in(line)) {
                found.add(line);
            }
        }
        return found;
    }
}
