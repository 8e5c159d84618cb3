package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The GitHub Actions workflow a fork gets ({@code .github/workflows/ci.yml}), checked offline: valid against the
 * workflow schema (action-validator), it runs exactly {@code .ci/run} (the one CI command) on a JDK of 21 or newer,
 * within a timeout, with read-only permissions, actions referenced by tag or digest (never a branch), and uploads the
 * test reports and the SBOM even when the build fails. {@code .ci/run} itself must work for the runner's non-root
 * user: its apt-get calls go through sudo there.
 */
class CiWorkflowTest {

    private static final Path WORKFLOW = Path.of(".github/workflows/ci.yml");
    private static final Pattern TAG_OR_DIGEST = Pattern.compile("v\\d+(\\.\\d+)*|[0-9a-f]{40}");
    private static final int CI_BUDGET_MINUTES = 90;

    @Test
    void theWorkflowIsValidAgainstTheGithubActionsSchema() {
        Path validator = DeployTools.require(DeployTools.Tool.ACTION_VALIDATOR);

        DeployTools.Result result = DeployTools.run(DeployTools.projectRoot(),
                                                    List.of(validator.toString(), WORKFLOW.toString()));

        assertEquals(0, result.exitCode(), () -> "action-validator " + WORKFLOW + ":\n" + result.stdout()
                                                  + result.stderr());
    }

    @Test
    void everyJobRunsCiRunOnAJdk21OrNewerWithinATimeout() throws IOException {
        for (Map.Entry<String, Map<String, Object>> job : jobs().entrySet()) {
            Object timeout = job.getValue().get("timeout-minutes");
            assertTrue(timeout instanceof Integer minutes && minutes > 0 && minutes <= CI_BUDGET_MINUTES,
                       () -> job.getKey() + ": timeout-minutes " + timeout + ", want 1.." + CI_BUDGET_MINUTES);
            List<Map<String, Object>> steps = steps(job.getValue());
            List<String> runs = steps.stream().filter(s -> s.containsKey("run"))
                    .map(s -> String.valueOf(s.get("run")).trim()).toList();
            assertThat(job.getKey() + ": the one CI command, and nothing besides it", runs,
                       is(List.of("bash .ci/run")));
            for (Map<String, Object> step : steps) {
                if (String.valueOf(step.get("uses")).startsWith("actions/setup-java@")) {
                    Object version = with(step).get("java-version");
                    assertTrue(Integer.parseInt(String.valueOf(version)) >= 21,
                               () -> "setup-java " + version + ": Helidon 4 needs Java 21 or newer");
                }
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void runsOnPullRequestsAndPushesToMain() throws IOException {
        // YAML 1.1 (SnakeYAML) reads the bare key `on` as the boolean true; GitHub reads it as the string.
        Map<Object, Object> workflow = (Map<Object, Object>) (Map<?, ?>) workflow();
        Map<String, Object> on = (Map<String, Object>) workflow.getOrDefault("on", workflow.get(Boolean.TRUE));

        assertThat(on.keySet(), hasItems("pull_request", "push"));
        assertEquals(Map.of("branches", List.of("main")), on.get("push"));
    }

    @Test
    void actionsArePinnedByTagOrDigestAndPermissionsAreReadOnly() throws IOException {
        Map<String, Object> workflow = workflow();
        List<String> unpinned = new ArrayList<>();
        for (Map<String, Object> job : jobs().values()) {
            for (Map<String, Object> step : steps(job)) {
                if (step.containsKey("uses")) {
                    String[] action = String.valueOf(step.get("uses")).split("@", 2);
                    if (action.length < 2 || !TAG_OR_DIGEST.matcher(action[1]).matches()) {
                        unpinned.add(String.valueOf(step.get("uses")));
                    }
                }
            }
        }

        assertThat("actions on a branch (main, master) change under you", unpinned, is(empty()));
        assertEquals(Map.of("contents", "read"), workflow.get("permissions"));
    }

    @Test
    void testReportsAndTheSbomAreUploadedEvenWhenTheBuildFails() throws IOException {
        List<String> uploaded = new ArrayList<>();
        for (Map<String, Object> job : jobs().values()) {
            for (Map<String, Object> step : steps(job)) {
                if (String.valueOf(step.get("uses")).startsWith("actions/upload-artifact@")) {
                    assertEquals("always()", step.get("if"), () -> step.get("name") + ": upload after a failure too");
                    String.valueOf(with(step).get("path")).lines().map(String::trim).forEach(uploaded::add);
                }
            }
        }

        assertThat(uploaded, hasItems("target/surefire-reports/", "target/failsafe-reports/", "target/bom.json"));
    }

    @Test
    void ciRunCallsAptGetThroughSudoWhenNotRoot() throws IOException {
        List<String> aptCalls = Files.readAllLines(DeployTools.projectRoot().resolve(".ci/run")).stream()
                .map(String::trim).filter(line -> line.matches(".*\\bapt-get (update|install)\\b.*")).toList();

        assertThat(aptCalls.size(), is(2));
        for (String call : aptCalls) {
            assertTrue(call.startsWith("as_root apt-get"), () -> ".ci/run: " + call + " fails for a non-root user");
        }
    }

    private static Map<String, Object> workflow() throws IOException {
        return new Yaml().load(Files.readString(DeployTools.projectRoot().resolve(WORKFLOW)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> jobs() throws IOException {
        Map<String, Map<String, Object>> jobs = (Map<String, Map<String, Object>>) workflow().get("jobs");
        assertTrue(jobs != null && !jobs.isEmpty(), "the workflow has jobs");
        return jobs;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> steps(Map<String, Object> job) {
        return (List<Map<String, Object>>) job.get("steps");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> with(Map<String, Object> step) {
        return (Map<String, Object>) step.getOrDefault("with", Map.of());
    }
}
