package com.example.payments.lifecycle;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Pattern;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.example.payments.testing.TestCredentials;

import org.hamcrest.Description;
import org.hamcrest.Matcher;
import org.hamcrest.TypeSafeMatcher;

/**
 * What the shutdown tests share: configuration, in-flight POSTs over raw sockets, waiting on a metric, reading the
 * phase lines of the service log, and writing the timeline with those lines merged in.
 */
final class ShutdownTests {

    /** Probe poll interval: fine enough to see each transition, light enough for a 2-core machine. */
    static final Duration POLL = Duration.ofMillis(100);
    static final Duration EXIT = Duration.ofSeconds(30);
    static final String SEQUENCE = "lifecycle.ShutdownSequence";
    private static final Pattern TIMESTAMP = Pattern.compile("(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3})");
    private static final Pattern PHASE_DONE = Pattern.compile("Shutdown phase (\\S+) done in (\\d+) ms");

    private ShutdownTests() {
    }

    /**
     * System properties from key-value pairs.
     *
     * @param keyValues {@code key1, value1, key2, value2, ...}
     * @return the properties, in order
     */
    static Map<String, String> config(String... keyValues) {
        Map<String, String> config = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            config.put(keyValues[i], keyValues[i + 1]);
        }
        return config;
    }

    /**
     * Sends one authorization on its own connection, on a new thread.
     *
     * @param port     business port
     * @param key      idempotency key
     * @param timeline where its send, first byte and status go
     * @param source   timeline source, e.g. {@code post-1}
     * @return the response, or a failed future
     */
    static CompletableFuture<RawHttp.Response> postAsync(int port, String key, Timeline timeline, String source) {
        CompletableFuture<RawHttp.Response> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon(true).name(source).start(() -> {
            try {
                result.complete(post(port, key, timeline, source));
            } catch (IOException | RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /**
     * Sends one authorization on its own connection.
     *
     * @param port     business port
     * @param key      idempotency key
     * @param timeline where its steps go
     * @param source   timeline source
     * @return the response
     * @throws IOException when there is no complete response
     */
    static RawHttp.Response post(int port, String key, Timeline timeline, String source) throws IOException {
        try (RawHttp connection = RawHttp.connect(port, timeline, source)) {
            return connection.exchange("POST", "/v1/authorizations",
                                       Map.of("Content-Type", "application/json", "Idempotency-Key", key,
                                              "Authorization", TestCredentials.AUTHORIZATION),
                                       Http.VALID_BODY);
        }
    }

    /**
     * The response of a finished future, with the failure unwrapped.
     *
     * @param future the future
     * @return the response
     * @throws Exception the failure
     */
    static RawHttp.Response join(CompletableFuture<RawHttp.Response> future) throws Exception {
        try {
            return future.join();
        } catch (CompletionException e) {
            throw (Exception) e.getCause();
        }
    }

    /**
     * Waits until a metric reaches a value.
     *
     * @param service the service
     * @param name    sample name
     * @param labels  required labels
     * @param atLeast value to reach
     * @throws Exception when it does not within 15 s
     */
    static void awaitMetric(ServiceProcess service, String name, Map<String, String> labels, double atLeast)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        double value = 0;
        while (System.nanoTime() < deadline) {
            value = MetricsScrape.of(service.healthPort()).sum(name, labels);
            if (value >= atLeast) {
                return;
            }
            Thread.sleep(25);
        }
        throw new AssertionError(name + labels + " stayed at " + value + ", expected >= " + atLeast);
    }

    /**
     * Milliseconds since the signal at which the service wrote the first line containing a text: the timestamp of
     * the line itself (text and JSON format alike), taken when the event was logged; when a line has none, the
     * time it arrived here, a few ms later (more on a loaded machine).
     *
     * @param timeline the timeline (its signal is the origin)
     * @param service  the service
     * @param fragment text to look for
     * @return ms since the signal
     * @throws AssertionError when no line contains it
     */
    static long lineMillis(Timeline timeline, ServiceProcess service, String fragment) {
        ServiceProcess.Line line = service.lines().stream().filter(l -> l.text().contains(fragment)).findFirst()
                .orElseThrow(() -> new AssertionError("No log line contains '" + fragment + "':\n"
                                                      + String.join("\n", service.output())));
        java.util.regex.Matcher timestamp = TIMESTAMP.matcher(line.text());
        if (timestamp.find()) {
            return timeline.millisAtEpoch(LocalDateTime.parse(timestamp.group(1)).atZone(ZoneId.systemDefault())
                                                  .toInstant().toEpochMilli());
        }
        return timeline.millis(line.nanos());
    }

    /**
     * Milliseconds since the signal at which the service logged its first shutdown line: the signal was handled (and
     * {@code draining} set) by then. Between {@code kill} returning and this, the JVM's signal dispatcher has not
     * necessarily run yet: a few ms on an idle machine, 100 ms and more on a loaded one; a request in that window
     * races the signal itself, so tests judge "after the signal" from here.
     *
     * @param timeline the timeline
     * @param service  the service
     * @return ms since the signal
     */
    static long handledMillis(Timeline timeline, ServiceProcess service) {
        return lineMillis(timeline, service, "received: draining");
    }

    /**
     * A phase's duration as the service logged it ({@code Shutdown phase drain done in 2040 ms}).
     *
     * @param service the service
     * @param phase   e.g. {@code drain}
     * @return ms
     * @throws AssertionError when the phase was not logged
     */
    static long phaseMillis(ServiceProcess service, String phase) {
        for (String line : service.output()) {
            java.util.regex.Matcher matcher = PHASE_DONE.matcher(line);
            if (matcher.find() && matcher.group(1).equals(phase)) {
                return Long.parseLong(matcher.group(2));
            }
        }
        throw new AssertionError("Phase " + phase + " not logged:\n" + String.join("\n", service.output()));
    }

    /**
     * A matcher for a whole string against a regular expression (hamcrest 1.3 has none).
     *
     * @param regex the expression
     * @return the matcher
     */
    static Matcher<String> matchesPattern(String regex) {
        return new TypeSafeMatcher<>() {
            @Override
            protected boolean matchesSafely(String item) {
                return Pattern.matches(regex, item);
            }

            @Override
            public void describeTo(Description description) {
                description.appendText("a string matching ").appendValue(regex);
            }
        };
    }

    /**
     * Merges the service's shutdown lines (sequence and listener close) into the timeline and writes it to
     * {@code target/timelines/}.
     *
     * @param timeline the timeline
     * @param service  the service
     * @return the file
     * @throws IOException when it cannot be written
     */
    static Path finish(Timeline timeline, ServiceProcess service) throws IOException {
        timeline.addServiceLines(service.lines(), line -> line.contains(SEQUENCE) || line.contains("lifecycle.")
                || line.contains("socket closed") || line.contains("stopped all channels"));
        return timeline.write(service.output());
    }
}
