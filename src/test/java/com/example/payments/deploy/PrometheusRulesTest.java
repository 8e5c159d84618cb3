package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Runs promtool on the alert rules exactly as {@code kubectl kustomize k8s/overlays/prod} renders them: a syntax and
 * template check, then the unit tests of {@code src/test/resources/deploy/prometheus-rules-test.yaml}, whose input
 * series are shaped like a real scrape of the health listener.
 */
class PrometheusRulesTest {

    private static final Path UNIT_TESTS = Path.of("src/test/resources/deploy/prometheus-rules-test.yaml");

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
        Files.copy(DeployTools.projectRoot().resolve(UNIT_TESTS), dir.resolve("rules-test.yaml"));

        DeployTools.Result result = DeployTools.run(dir, List.of(promtool.toString(), "test", "rules", "rules-test.yaml"));

        assertEquals(0, result.exitCode(), () -> "promtool test rules:\n" + result.stdout() + result.stderr());
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
