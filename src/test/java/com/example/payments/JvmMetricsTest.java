package com.example.payments;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import com.example.payments.observability.BuildInfo;
import com.example.payments.testing.MetricsScrape;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.not;

/**
 * {@code GET /metrics} on the health listener carries the JVM and process series under Micrometer's names, with the
 * service's {@code scope="application"} label, and the build-info gauge with the version and git revision.
 */
class JvmMetricsTest {

    @Test
    void metricsCarryTheJvmAndProcessSeriesAndTheBuildInfo() throws Exception {
        try (TestService service = TestService.start(Map.of())) {
            MetricsScrape scrape = MetricsScrape.of(service.running().health().port());
            Map<String, String> heap = Map.of("area", "heap", "scope", "application");

            assertThat(scrape.sum("jvm_memory_used_bytes", heap), greaterThan(0.0));
            assertThat(scrape.sum("jvm_memory_committed_bytes", heap), greaterThan(0.0));
            assertThat(scrape.sum("jvm_threads_live_threads", Map.of("scope", "application")), greaterThan(0.0));
            assertThat(scrape.sum("jvm_classes_loaded_classes", Map.of("scope", "application")), greaterThan(0.0));
            assertThat(scrape.sum("process_files_open_files", Map.of("scope", "application")), greaterThan(0.0));
            assertThat(scrape.sum("process_files_max_files", Map.of("scope", "application")), greaterThan(0.0));
            double start = scrape.sum("process_start_time_seconds", Map.of("scope", "application"));
            assertThat(start, allOf(greaterThan(1.7e9), lessThanOrEqualTo(System.currentTimeMillis() / 1000.0)));
            assertThat(scrape.sum("process_uptime_seconds", Map.of("scope", "application")), greaterThan(0.0));
            assertThat(names(scrape), hasItem("process_cpu_usage"));
            assertThat(names(scrape), hasItem("system_cpu_count"));
            assertThat(names(scrape), hasItem("jvm_gc_overhead"));
            assertThat(scrape.samples().stream().filter(s -> s.name().equals("jvm_memory_usage_after_gc")).toList(),
                       hasItem(sampleWith(Map.of("area", "heap", "pool", "long-lived", "scope", "application"))));

            List<MetricsScrape.Sample> build = scrape.samples().stream()
                    .filter(s -> s.name().equals("app_build_info")).toList();
            assertThat(build.size(), is(1));
            assertThat(build.getFirst().value(), is(1.0));
            assertThat(build.getFirst().labels(), hasEntry("scope", "application"));
            assertThat(build.getFirst().labels(), hasEntry("version", BuildInfo.load().version()));
            // Built in a git checkout of its own, the revision is its HEAD; in a linked worktree (.git is a file) the
            // build leaves it unknown rather than name the main checkout's commit.
            String revision = build.getFirst().labels().get("revision");
            if (java.nio.file.Files.isDirectory(java.nio.file.Path.of(".git"))) {
                assertThat(revision, revision.matches("[0-9a-f]{12}"), is(true));
                headCommit().ifPresent(head -> assertThat("the checkout's HEAD", revision, is(head)));
            } else {
                assertThat(revision, is(BuildInfo.UNKNOWN));
            }
            assertThat(build.getFirst().labels().get("version"), not(BuildInfo.UNKNOWN));
        }
    }

    @Test
    void jvmSeriesSurviveARestartInTheSameJvm() throws Exception {
        // In-JVM tests remove every meter when a service stops; the next service binds them again.
        try (TestService first = TestService.start(Map.of())) {
            assertThat(first.metric("jvm_threads_live_threads", Map.of()), greaterThan(0.0));
        }
        try (TestService second = TestService.start(Map.of())) {
            assertThat(second.metric("jvm_threads_live_threads", Map.of()), greaterThan(0.0));
            assertThat(second.metric("app_build_info", Map.of()), is(1.0));
        }
    }

    @Test
    @Timeout(120)
    void garbageCollectionsWhileMetersAreCreatedNeverDeadlock() throws Exception {
        // JvmGcMetrics creates a timer on the JVM's notification thread at each new GC cause. Bound to Helidon's
        // registry it deadlocked against a thread creating a meter through Helidon (each took the other's lock).
        try (TestService service = TestService.start(Map.of())) {
            MeterRegistry meters = service.running().meters();
            assertThat("the JVM series are not in Helidon's own meter list, so its lock is never taken for them",
                       meters.meters().stream().anyMatch(m -> m.id().name().startsWith("jvm")), is(false));
            AtomicBoolean done = new AtomicBoolean();
            Thread creator = Thread.ofPlatform().start(() -> {
                for (int i = 0; !done.get(); i++) {
                    meters.getOrCreate(Counter.builder("deadlock_probe_total").tags(List.of(
                            Tag.create("n", String.valueOf(i % 500)))));
                }
            });
            for (int i = 0; i < 20; i++) {
                System.gc();
            }
            done.set(true);
            creator.join(Duration.ofSeconds(30));
            assertThat("the meter-creating thread finished", creator.isAlive(), is(false));
            // The JVM reports each collection a moment later, on its notification thread.
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (service.metric("jvm_gc_pause_seconds_count", Map.of("cause", "System.gc()")) == 0
                   && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            assertThat(service.metric("jvm_gc_pause_seconds_count", Map.of("cause", "System.gc()")), greaterThan(0.0));
        }
    }

    @Test
    void aValueTheBuildCouldNotFillReadsUnknown() {
        assertThat(BuildInfo.of("1.0.0", "${git.commit.id.abbrev}").revision(), is(BuildInfo.UNKNOWN));
        assertThat(BuildInfo.of("", "abc1234").version(), is(BuildInfo.UNKNOWN));
        assertThat(BuildInfo.of("1.0.0", "abc1234").revision(), is("abc1234"));
    }

    // The commit the build saw, by the git command; empty where git is not installed.
    private static java.util.Optional<String> headCommit() throws InterruptedException {
        try {
            Process git = new ProcessBuilder("git", "rev-parse", "--short=12", "HEAD").redirectErrorStream(true).start();
            String out = new String(git.getInputStream().readAllBytes()).strip();
            return git.waitFor() == 0 ? java.util.Optional.of(out) : java.util.Optional.empty();
        } catch (java.io.IOException e) {
            return java.util.Optional.empty();
        }
    }

    private static List<String> names(MetricsScrape scrape) {
        return scrape.samples().stream().map(MetricsScrape.Sample::name).distinct().toList();
    }

    private static org.hamcrest.Matcher<MetricsScrape.Sample> sampleWith(Map<String, String> labels) {
        return new org.hamcrest.TypeSafeMatcher<>() {
            @Override
            protected boolean matchesSafely(MetricsScrape.Sample sample) {
                return sample.labels().entrySet().containsAll(labels.entrySet());
            }

            @Override
            public void describeTo(org.hamcrest.Description description) {
                description.appendText("a sample with labels ").appendValue(labels);
            }
        };
    }
}
