package com.example.payments.docs;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.example.payments.http.Json;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Tools;
import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

/**
 * Runs every runnable example of README.md and of each file under docs/ ({@code ```console} blocks, see {@link Docs}
 * for the convention) with curl against the built jar started as the docs start it
 * ({@code APP_CONFIG_FILE=config/dev/config.yaml}, the development API key): one fresh service per file, the
 * examples in order, failing when a shown status, header or body field differs from what the service really
 * answers. Ids and timestamps differ from run to run: a shown id is mapped to the real one the first time it
 * appears, a shown {@code createdAt}, {@code expiresAt} or {@code updatedAt} must be an instant.
 */
class DocExamplesIT {

    private static final String PROMPT = "$ ";

    record Example(String command, List<String> output) {
    }

    static Stream<Path> filesWithExamples() {
        return Docs.files().stream().filter(file -> !examples(file).isEmpty());
    }

    @ParameterizedTest
    @MethodSource("filesWithExamples")
    void everyCurlExampleAnswersAsShown(Path file) throws Exception {
        Tools.require("curl", "apt-get install -y curl");
        List<Example> examples = examples(file);
        Map<String, String> ids = new HashMap<>();
        // As the docs start it: on the development config, which holds the development API key.
        try (ServiceProcess service = ServiceProcess.start(Map.of(), Map.of("APP_CONFIG_FILE",
                                                                            "config/dev/config.yaml"))) {
            // A reader runs the examples once the service has started: ready, not booting (nor warming up).
            service.awaitReady(java.time.Duration.ofSeconds(60));
            for (Example example : examples) {
                String command = example.command()
                        .replace("localhost:8080", "127.0.0.1:" + service.businessPort())
                        .replace("localhost:8081", "127.0.0.1:" + service.healthPort());
                for (Map.Entry<String, String> id : ids.entrySet()) {
                    command = command.replace(id.getKey(), id.getValue());
                }
                List<String> actual = run(command);
                compare(file, example, actual, ids);
            }
        }
    }

    @org.junit.jupiter.api.Test
    void theReadmeAndTheApiDocumentHaveExamples() {
        assertThat("examples in README.md", examples(Path.of("README.md")).size(), greaterThan(3));
        assertThat("examples in docs/api.md", examples(Path.of("docs", "api.md")).size(), greaterThan(10));
    }

    static List<Example> examples(Path file) {
        List<Example> examples = new ArrayList<>();
        for (Docs.Block block : Docs.blocks(file)) {
            if (block.runnable()) {
                examples.addAll(examples(block.lines()));
            }
        }
        return examples;
    }

    static List<Example> examples(List<String> block) {
        List<Example> examples = new ArrayList<>();
        String command = null;
        List<String> output = new ArrayList<>();
        for (String line : block) {
            if (line.startsWith(PROMPT)) {
                if (command != null && command.startsWith("curl")) {
                    examples.add(new Example(command, output));
                }
                output = new ArrayList<>();
                command = line.substring(PROMPT.length());
            } else {
                output.add(line);
            }
        }
        if (command != null && command.startsWith("curl")) {
            examples.add(new Example(command, output));
        }
        return examples;
    }

    private static List<String> run(String command) throws Exception {
        Process process = new ProcessBuilder("bash", "-c", command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(30, TimeUnit.SECONDS);
        return List.of(out.replace("\r\n", "\n").split("\n", -1)).stream()
                .dropWhile(String::isEmpty).toList().reversed().stream().dropWhile(String::isEmpty).toList().reversed();
    }

    private static void compare(Path file, Example example, List<String> actual, Map<String, String> ids) throws Exception {
        String context = file + " example: " + example.command() + "\nactual output:\n" + String.join("\n", actual);
        List<String> shown = example.output();
        if (!shown.isEmpty() && shown.getFirst().startsWith("HTTP/1.1 ")) {
            compareHttp(shown, actual, ids, context);
        } else if (!shown.isEmpty() && shown.getFirst().startsWith("{")) {
            compareJson(String.join("\n", shown), String.join("\n", actual), ids, context);
        } else {
            assertThat(context, actual, containsInAnyOrder(shown.toArray()));
        }
    }

    private static void compareHttp(List<String> shown, List<String> actual, Map<String, String> ids, String context)
            throws Exception {
        assertThat(context, actual.getFirst().split(" ")[1], is(shown.getFirst().split(" ")[1]));
        Map<String, String> actualHeaders = headers(actual);
        for (Map.Entry<String, String> header : headers(shown).entrySet()) {
            String name = header.getKey();
            if (name.equals("date") || name.equals("content-length")) {
                continue;
            }
            if (name.equals("x-request-id")) {
                assertThat(context + "\nheader " + name, actualHeaders.getOrDefault(name, "").matches("[0-9a-f]{32}"),
                           is(true));
                continue;
            }
            String expected = header.getValue();
            if (name.equals("location")) {
                String shownId = expected.substring(expected.lastIndexOf('/') + 1);
                String actualId = actualHeaders.getOrDefault(name, "").substring(
                        actualHeaders.getOrDefault(name, "").lastIndexOf('/') + 1);
                ids.putIfAbsent(shownId, actualId);
                expected = expected.replace(shownId, ids.get(shownId));
            }
            assertThat(context + "\nheader " + name, actualHeaders.get(name), is(expected));
        }
        compareJson(body(shown), body(actual), ids, context);
    }

    private static Map<String, String> headers(List<String> response) {
        Map<String, String> headers = new HashMap<>();
        for (String line : response.subList(1, response.size())) {
            if (line.isEmpty()) {
                break;
            }
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).toLowerCase(java.util.Locale.ROOT), line.substring(colon + 1).trim());
        }
        return headers;
    }

    private static String body(List<String> response) {
        int blank = response.indexOf("");
        return blank < 0 ? "" : String.join("\n", response.subList(blank + 1, response.size()));
    }

    private static void compareJson(String shown, String actual, Map<String, String> ids, String context)
            throws Exception {
        if (shown.isBlank()) {
            return;
        }
        if (!shown.startsWith("{")) {
            assertThat(context, actual, is(shown));
            return;
        }
        compareNode(Json.mapper().readTree(shown), Json.mapper().readTree(actual), ids, context, "");
    }

    private static void compareNode(JsonNode shown, JsonNode actual, Map<String, String> ids, String context,
                                    String path) {
        if (shown.isObject()) {
            List<String> shownFields = new ArrayList<>();
            shown.fieldNames().forEachRemaining(shownFields::add);
            List<String> actualFields = new ArrayList<>();
            actual.fieldNames().forEachRemaining(actualFields::add);
            if (!shown.has("requestId") && actual.path("requestId").asText().matches("[0-9a-f]{32}")) {
                // Every problem has one, different on each run: an example may leave it out (docs/observability.md).
                actualFields.remove("requestId");
            }
            assertThat(context + "\nfields of " + path, actualFields, is(shownFields));
            for (String field : shownFields) {
                compareNode(shown.get(field), actual.get(field), ids, context, path + "/" + field);
            }
        } else if (shown.isArray()) {
            assertThat(context + "\nsize of " + path, actual.size(), is(shown.size()));
            for (int i = 0; i < shown.size(); i++) {
                compareNode(shown.get(i), actual.get(i), ids, context, path + "/" + i);
            }
        } else if (path.endsWith("/id")) {
            ids.putIfAbsent(shown.asText(), actual.asText());
            assertThat(context + "\n" + path, actual.asText(), is(ids.get(shown.asText())));
        } else if (path.endsWith("/requestId")) {
            assertThat(context + "\n" + path, actual.asText().matches("[0-9a-f]{32}"), is(true));
        } else if (path.endsWith("/createdAt") || path.endsWith("/expiresAt") || path.endsWith("/updatedAt")) {
            Instant.parse(actual.asText());
        } else {
            assertThat(context + "\n" + path, actual, is(shown));
        }
    }
}
