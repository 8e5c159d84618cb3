package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Runs promtool on the alert rules exactly as {@code kubectl kustomize k8s/overlays/prod} renders them: a syntax and
 * template check, then the unit tests of {@code src/test/resources/deploy/prometheus-rules-test.yaml} (the lifecycle
 * alerts, evaluated every 5 s) and {@code prometheus-rules-test-1m.yaml} (the alerts on rates over minutes and hours,
 * evaluated every minute), whose input series are shaped like a real scrape of the health listener; and checks that
 * those tests show every alert firing and staying quiet, and that every alert links its own section of
 * {@code docs/runbooks.md}.
 */
class PrometheusRulesTest {

    private static final List<Path> UNIT_TESTS = List.of(Path.of("src/test/resources/deploy/prometheus-rules-test.yaml"),
                                                         Path.of("src/test/resources/deploy/prometheus-rules-test-1m.yaml"));
    private static final Path RUNBOOKS = Path.of("docs/runbooks.md");
    private static final String RUNBOOK_PATH = "/docs/runbooks.md#";

    @Test
    void renderedProdRulesPassPromtoolCheck(@TempDir Path dir) throws IOException {
        Path promtool = DeployTools.require(DeployTools.Tool.PROMTOOL);
        writeRules(dir.resolve("rules.yaml"), true);

        DeployTools.Result result = DeployTools.run(dir, List.of(promtool.toString(), "check", "rules", "rules.yaml"));

        assertEquals(0, result.exitCode(), () -> "promtool check rules:\n" + result.stdout() + result.stderr());
    }

    @Test
    void renderedProdAlertsFireOnRealisticSeriesAndStayQuietOtherwise(@TempDir Path dir) throws IOException {
        Path promtool = DeployTools.require(DeployTools.Tool.PROMTOOL);
        // promtool compares annotations exactly; they are prose, validated by the check above, so left out here.
        writeRules(dir.resolve("rules.yaml"), false);
        List<String> command = new ArrayList<>(List.of(promtool.toString(), "test", "rules"));
        for (Path unitTests : UNIT_TESTS) {
            Files.copy(DeployTools.projectRoot().resolve(unitTests), dir.resolve(unitTests.getFileName()));
            command.add(unitTests.getFileName().toString());
        }

        DeployTools.Result result = DeployTools.run(dir, command);

        assertEquals(0, result.exitCode(), () -> "promtool test rules:\n" + result.stdout() + result.stderr());
    }

    @Test
    void theUnitTestsShowEveryAlertFiringAndStayingQuiet() throws IOException {
        Set<String> firing = new TreeSet<>();
        Set<String> quiet = new TreeSet<>();
        List<Map<String, Object>> tests = new ArrayList<>();
        for (Path file : UNIT_TESTS) {
            Map<String, Object> unitTests = new Yaml().load(Files.readString(DeployTools.projectRoot().resolve(file)));
            tests.addAll(MonitoringManifestsTest.list(unitTests.get("tests")));
        }
        for (Map<String, Object> test : tests) {
            Object cases = test.get("alert_rule_test");
            for (Map<String, Object> alertCase : cases == null ? List.<Map<String, Object>>of()
                                                               : MonitoringManifestsTest.list(cases)) {
                boolean fires = !((List<?>) alertCase.get("exp_alerts")).isEmpty();
                (fires ? firing : quiet).add(String.valueOf(alertCase.get("alertname")));
            }
        }

        for (String alert : alerts().keySet()) {
            assertThat(alert + " is never shown firing", firing.contains(alert), is(true));
            assertThat(alert + " is never shown quiet", quiet.contains(alert), is(true));
        }
    }

    @Test
    void everyAlertLinksItsOwnSectionOfTheRunbooks() throws IOException {
        Set<String> sections = Files.readAllLines(DeployTools.projectRoot().resolve(RUNBOOKS)).stream()
                .filter(line -> line.startsWith("## ")).map(line -> anchor(line.substring(3)))
                .collect(Collectors.toSet());
        Map<String, String> urls = new LinkedHashMap<>();
        alerts().forEach((alert, rule) -> {
            Object annotations = rule.get("annotations");
            String url = annotations instanceof Map<?, ?> map ? String.valueOf(map.get("runbook_url")) : "none";
            urls.put(alert, url);
        });

        List<String> problems = urls.entrySet().stream()
                .filter(e -> !e.getValue().startsWith("https://") || !e.getValue().contains(RUNBOOK_PATH)
                             || !e.getValue().endsWith("#" + anchor(e.getKey()))
                             || !sections.contains(anchor(e.getKey())))
                .map(e -> e.getKey() + " -> " + e.getValue()).toList();
        assertThat("each alert's runbook_url must end in " + RUNBOOK_PATH + "<its name, lower case>, a \"## <name>\" "
                   + "section of " + RUNBOOKS + " (sections: " + sections + ")", problems, is(empty()));
        assertEquals(urls.size(), Set.copyOf(urls.values()).size(), "one section per alert");
    }

    // GitHub's anchor of a heading: lower case, spaces to dashes, punctuation but dashes and underscores dropped.
    private static String anchor(String heading) {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    private static Map<String, Map<String, Object>> alerts() {
        Map<String, Map<String, Object>> alerts = new LinkedHashMap<>();
        MonitoringManifestsTest.rules(RenderedOverlay.of("prod")).stream().filter(rule -> rule.containsKey("alert"))
                .forEach(rule -> alerts.put(String.valueOf(rule.get("alert")), rule));
        return alerts;
    }

    private static void writeRules(Path file, boolean withAnnotations) throws IOException {
        Map<String, Object> spec = MonitoringManifestsTest.spec(RenderedOverlay.of("prod"), "PrometheusRule");
        List<Map<String, Object>> groups = MonitoringManifestsTest.list(spec.get("groups")).stream()
                .map(group -> withoutAnnotations(group, withAnnotations)).toList();
        Files.writeString(file, new Yaml().dump(Map.of("groups", groups)));
    }

    private static Map<String, Object> withoutAnnotations(Map<String, Object> group, boolean keep) {
        Map<String, Object> copy = new LinkedHashMap<>(group);
        copy.put("rules", MonitoringManifestsTest.list(group.get("rules")).stream().map(rule -> {
            Map<String, Object> r = new LinkedHashMap<>(rule);
            if (!keep) {
                r.remove("annotations");
            }
            return r;
        }).toList());
        return copy;
    }
}
