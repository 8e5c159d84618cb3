package com.example.payments.deploy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every series the rendered alert rules select (but {@code up}, which Prometheus writes itself), and the bucket bounds
 * their promtool tests use, exist in a real scrape: the service runs in a child JVM, answers a {@code POST} (a 401:
 * the latency objective's series are those of POSTs), gets SIGTERM, and {@code /metrics} is read during its metrics
 * linger, the only time {@code shutdown_duration_seconds} exists (as the PodMonitor would read it).
 */
class ExportedMetricsTest {

    private static final Pattern PORTS = Pattern.compile("on port (\\d+), health probes and metrics on port (\\d+)");
    private static final Pattern MATCHER = Pattern.compile("(\\w+)=\"([^\"]*)\"");
    private static final Pattern LE = Pattern.compile("le=\\\\?\"([^\"\\\\]+)\\\\?\"");
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    @Test
    void alertRulesSelectSeriesThatARealShutdownScrapeContains(@TempDir Path dir) throws Exception {
        List<MonitoringManifestsTest.Selector> selectors = MonitoringManifestsTest.selectors(RenderedOverlay.of("prod"));
        String scrape = scrapeDuringMetricsLinger(dir.resolve("service.log"));

        for (MonitoringManifestsTest.Selector selector : selectors) {
            if (ExportedSeries.PROMETHEUS_SERIES.contains(selector.name())) {
                continue; // up: written by Prometheus for every target, never in a scrape
            }
            assertTrue(hasSample(scrape, selector.name(), selector.matchers()),
                       () -> "the rules select " + selector + ", absent from a real scrape:\n" + scrape);
        }
        for (String file : List.of("prometheus-rules-test.yaml", "prometheus-rules-test-1m.yaml")) {
            String unitTests = Files.readString(DeployTools.projectRoot().resolve("src/test/resources/deploy/" + file));
            Matcher le = LE.matcher(unitTests);
            while (le.find()) {
                String bound = "le=\"" + le.group(1) + "\"";
                assertTrue(hasSample(scrape, "shutdown_duration_seconds_bucket", "phase=\"total\"," + bound),
                           () -> file + " uses " + bound + ", which the service does not export");
            }
        }
    }

    private static boolean hasSample(String scrape, String name, String matchers) {
        List<String> required = new ArrayList<>();
        Matcher m = MATCHER.matcher(matchers);
        while (m.find()) {
            required.add(m.group(1) + "=\"" + m.group(2) + "\"");
        }
        return scrape.lines().filter(line -> line.startsWith(name + "{"))
                .anyMatch(line -> required.stream().allMatch(line::contains));
    }

    /** Starts the service on free ports, sends SIGTERM once it is ready, returns /metrics read during the linger. */
    private static String scrapeDuringMetricsLinger(Path log) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "-Dserver.port=0", "-Dhealth-server.port=0", "-Dshutdown.metrics-linger=PT3S",
                "com.example.payments.Main").redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().remove("APP_CONFIG_FILE");
        Process service = builder.start();
        try {
            Matcher ports = awaitPorts(service, log);
            String base = "http://127.0.0.1:" + ports.group(2);
            awaitStatus(base + "/health/ready", 200);
            HttpResponse<String> post = HTTP.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + ports.group(1) + "/v1/authorizations"))
                    .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(401, post.statusCode(), "a POST without credentials");
            service.destroy(); // SIGTERM
            String scrape = awaitBodyContaining(base + "/metrics", "shutdown_duration_seconds_bucket{phase=\"total\"");
            assertTrue(service.waitFor(30, TimeUnit.SECONDS), "the service did not exit after SIGTERM");
            assertEquals(0, service.exitValue(), () -> "exit status after SIGTERM; log:\n" + read(log));
            return scrape;
        } finally {
            service.destroyForcibly();
        }
    }

    // Group 1 the business port, group 2 the health port.
    private static Matcher awaitPorts(Process service, Path log) throws Exception {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < end && service.isAlive()) {
            Matcher ports = PORTS.matcher(read(log));
            if (ports.find()) {
                return ports;
            }
            Thread.sleep(50);
        }
        return fail("the service did not start; log:\n" + read(log));
    }

    private static void awaitStatus(String url, int status) throws Exception {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < end) {
            if (get(url).map(HttpResponse::statusCode).orElse(-1) == status) {
                return;
            }
            Thread.sleep(50);
        }
        fail(url + " never answered " + status);
    }

    private static String awaitBodyContaining(String url, String text) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < end) {
            Optional<HttpResponse<String>> response = get(url);
            if (response.isPresent() && response.get().statusCode() == 200 && response.get().body().contains(text)) {
                return response.get().body();
            }
            Thread.sleep(50);
        }
        return fail(url + " never showed " + text);
    }

    /** The response, or empty while the listener is not (or no longer) accepting connections. */
    private static Optional<HttpResponse<String>> get(String url) throws InterruptedException {
        try {
            return Optional.of(HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                                         HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String read(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }
}
