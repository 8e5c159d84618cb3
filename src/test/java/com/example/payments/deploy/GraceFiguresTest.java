package com.example.payments.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.example.payments.testing.EnvironmentFiles;

import io.fabric8.kubernetes.api.model.Probe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

/**
 * The grace-arithmetic, probe-budget and breaker-trip figures quoted in docs/, in the environment files and in the
 * manifests' comments are the figures the environments really have. The environment files are read as plain YAML
 * ({@link PlainManifests}), so the grace arithmetic of every environment is checked even where kubectl is missing;
 * only {@link #thePlainReadingIsWhatTheOverlayRenders} needs kubectl, and proves that reading is what ships.
 */
class GraceFiguresTest {

    /** {@code preStop 5 + pre-drain 5 + ... + margin 5 = 39 < 45}, the grace period possibly named. */
    private static final Pattern GRACEFUL = Pattern.compile(
            "preStop \\S+ \\+ pre-drain .*? = \\S+ < (?:terminationGracePeriodSeconds )?\\d+");
    private static final Pattern HARD = Pattern.compile(
            "preStop \\S+ \\+ hard-deadline \\S+ = \\S+ < (?:terminationGracePeriodSeconds )?\\d+");
    /** A breaker trip time: {@code 150 x 2 s = 300 s}. */
    private static final Pattern TRIP = Pattern.compile("(\\d+) [x×] (\\d+) s = (\\d+) s");
    /** A probe budget in the manifest's comments: {@code periodSeconds 2 x failureThreshold 2 + timeoutSeconds 2 = 6 s}. */
    private static final Pattern BUDGET = Pattern.compile(
            "periodSeconds (\\d+) x failureThreshold (\\d+)(?: \\+ timeoutSeconds (\\d+))? = (\\d+) s");

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void theEnvironmentFilesKeepTheGraceArithmetic(String environment) {
        PlainManifests.grace(environment).check();
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void theGraceFiguresBesideTheValuesAreTheValues(String environment) throws IOException {
        List<String> expected = List.of(PlainManifests.grace(environment).summary().split("; "));
        List<String> quoted = new ArrayList<>();
        List<Path> files = new ArrayList<>(EnvironmentFiles.files(environment));
        EnvironmentFiles.directories(environment)
                .forEach(directory -> files.add(directory.resolve("kustomization.yaml")));
        for (Path file : files) {
            String text = read(file);
            for (Pattern pattern : List.of(GRACEFUL, HARD)) {
                Matcher figure = pattern.matcher(text);
                while (figure.find()) {
                    quoted.add(figure.group().replace("terminationGracePeriodSeconds ", ""));
                }
            }
        }
        assertThat("grace figures quoted in " + files, quoted.size(), greaterThan(0));
        for (String figure : quoted) {
            assertThat(files + " quote a grace figure the files do not have", expected, hasItem(figure));
        }
    }

    @Test
    void theGraceTableOfTheDocsIsTheEnvironments() throws IOException {
        List<String> rows = read(Path.of("docs", "deploying.md")).lines().toList();
        Environments.all().forEach(environment -> assertThat(
                "docs/deploying.md, grace table row of " + environment,
                rows.stream().filter(row -> row.startsWith("| " + environment + " |")).toList(),
                is(List.of(PlainManifests.grace(environment).tableRow()))));
    }

    @Test
    void theProbeBudgetsQuotedAreTheProbes() throws IOException {
        PlainManifests.Probe startup = PlainManifests.probe("startupProbe");
        PlainManifests.Probe readiness = PlainManifests.probe("readinessProbe");
        PlainManifests.Probe liveness = PlainManifests.probe("livenessProbe");
        String docs = read(Path.of("docs", "deploying.md"));
        assertThat("docs/deploying.md: startup budget", docs.contains("| " + startup.periodSeconds() + " s x "
                + startup.failureThreshold() + " = " + startup.periodSeconds() * startup.failureThreshold() + " s |"),
                   is(true));
        for (PlainManifests.Probe probe : List.of(readiness, liveness)) {
            String budget = probe.periodSeconds() + " s x " + probe.failureThreshold() + " + " + probe.timeoutSeconds()
                            + " s = " + (probe.periodSeconds() * probe.failureThreshold() + probe.timeoutSeconds())
                            + " s";
            assertThat("docs/deploying.md: " + budget, docs.contains("| " + budget + " |"), is(true));
        }
        // The comments of the Deployment, a figure possibly wrapped over two comment lines.
        String comments = read(Path.of("k8s", "base", "deployment.yaml")).replaceAll("\\n\\s*# ", " ");
        Matcher quoted = BUDGET.matcher(comments);
        List<String> wrong = new ArrayList<>();
        int found = 0;
        while (quoted.find()) {
            found++;
            long period = Long.parseLong(quoted.group(1));
            long failures = Long.parseLong(quoted.group(2));
            long timeout = quoted.group(3) == null ? 0 : Long.parseLong(quoted.group(3));
            boolean isAProbe = List.of(startup, readiness, liveness).stream().anyMatch(
                    p -> p.periodSeconds() == period && p.failureThreshold() == failures
                         && (quoted.group(3) == null || p.timeoutSeconds() == timeout));
            if (!isAProbe || period * failures + timeout != Long.parseLong(quoted.group(4))) {
                wrong.add(quoted.group());
            }
        }
        assertThat("probe budgets quoted in k8s/base/deployment.yaml", found, is(3));
        assertThat("probe budgets in k8s/base/deployment.yaml that are not a probe's", wrong, empty());
    }

    @Test
    void everyQuotedBreakerTripTimeIsAThresholdTimesTheReadinessPeriod() throws IOException {
        long period = PlainManifests.probe("readinessProbe").periodSeconds();
        Set<Long> thresholds = Environments.all().map(EnvironmentConfig::ofRepository)
                .map(config -> Long.parseLong(config.string("health.circuit-breaker.threshold")))
                .collect(Collectors.toCollection(TreeSet::new));
        List<String> wrong = new ArrayList<>();
        int found = 0;
        for (Path file : List.of(Path.of("docs", "deploying.md"), Path.of("docs", "probes-and-shutdown.md"),
                                 Path.of("k8s", "base", "deployment.yaml"),
                                 Path.of("src", "main", "resources", "application.yaml"),
                                 Path.of("config", "base", "base.yaml"))) {
            Matcher trip = TRIP.matcher(read(file));
            while (trip.find()) {
                found++;
                long threshold = Long.parseLong(trip.group(1));
                if (!thresholds.contains(threshold) || Long.parseLong(trip.group(2)) != period
                    || threshold * period != Long.parseLong(trip.group(3))) {
                    wrong.add(file + ": " + trip.group() + " (thresholds " + thresholds + ", readiness period "
                              + period + " s)");
                }
            }
        }
        assertThat("breaker trip times quoted", found, greaterThan(5));
        assertThat("breaker trip times that no environment has", wrong, empty());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void thePlainReadingIsWhatTheOverlayRenders(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        assertThat(environment + ": grace arithmetic, rendered vs read from the files",
                   GraceArithmetic.of(environment, overlay, EnvironmentConfig.of(overlay)),
                   is(PlainManifests.grace(environment)));
        var container = overlay.container();
        assertThat(environment + ": startup probe", timing(container.getStartupProbe()),
                   is(PlainManifests.probe("startupProbe")));
        assertThat(environment + ": readiness probe", timing(container.getReadinessProbe()),
                   is(PlainManifests.probe("readinessProbe")));
        assertThat(environment + ": liveness probe", timing(container.getLivenessProbe()),
                   is(PlainManifests.probe("livenessProbe")));
    }

    private static PlainManifests.Probe timing(Probe probe) {
        return new PlainManifests.Probe(probe.getPeriodSeconds(), probe.getFailureThreshold(),
                                        probe.getTimeoutSeconds());
    }

    private static String read(Path file) throws IOException {
        return Files.readString(DeployTools.projectRoot().resolve(file), StandardCharsets.UTF_8);
    }
}
