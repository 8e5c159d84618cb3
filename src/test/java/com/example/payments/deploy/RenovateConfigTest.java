package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yaml.snakeyaml.Yaml;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code renovate.json}: digest pinning on, and each manager's file patterns cover the files of its kind in this
 * repository; every Dockerfile base image is written in a form Renovate follows (a tag, in {@code FROM} or in an
 * {@code ARG} default that {@code FROM} uses); the Netty override is watched; the service's own image is left to the
 * release pipeline. Renovate itself validates and extracts with {@code scripts/check-renovate-config.sh} (it needs
 * Node.js 24 and ~560 MB, too much for every build).
 */
class RenovateConfigTest {

    private static final Path CONFIG = Path.of("renovate.json");
    // name[:port/path]:tag[@sha256:digest], without variables: what Renovate's dockerfile manager can look up.
    private static final Pattern IMAGE = Pattern.compile(
            "[a-z0-9][a-z0-9._/-]*(?::\\d+/[a-z0-9._/-]+)?:[\\w][\\w.-]{0,127}(?:@sha256:[0-9a-f]{64})?");
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{?(\\w+)(?::-[^}]*)?}?");

    @Test
    void digestPinningIsOnForEveryManagerTheForkNeeds() throws IOException {
        JsonNode config = config();
        List<String> managers = new ArrayList<>();
        config.path("enabledManagers").forEach(m -> managers.add(m.asText()));

        assertTrue(config.path("pinDigests").asBoolean(), "pinDigests");
        assertThat(texts(config.path("extends")), hasItem("config:recommended"));
        assertThat(managers, hasItems("maven", "dockerfile", "kustomize", "kubernetes", "github-actions"));
        if (config.has("customManagers")) {
            assertThat("custom managers run only when enabled", managers, hasItem("custom.regex"));
        }
    }

    @ParameterizedTest
    @CsvSource({"dockerfile, Dockerfile", "maven, pom.xml", "github-actions, .github/workflows",
                "kustomize, kustomization.yaml", "kubernetes, k8s/base"})
    void eachManagerMatchesEveryFileOfItsKind(String manager, String kind) throws IOException {
        List<Pattern> patterns = texts(config().path(manager).path("managerFilePatterns")).stream()
                .map(RenovateConfigTest::javaPattern).toList();
        List<String> files = repositoryFiles().stream().filter(f -> f.endsWith(kind) || f.startsWith(kind + "/"))
                .toList();

        assertThat(manager + ": files of its kind", files.isEmpty(), is(false));
        for (String file : files) {
            assertTrue(patterns.stream().anyMatch(p -> p.matcher(file).find()),
                       () -> manager + " does not match " + file + " with " + patterns);
        }
    }

    @Test
    void everyDockerfileBaseImageIsATagRenovateCanPinAndUpdate() throws IOException {
        List<String> images = baseImages(Files.readAllLines(DeployTools.projectRoot().resolve("Dockerfile")));

        assertThat(images.isEmpty(), is(false));
        for (String image : images) {
            assertTrue(IMAGE.matcher(image).matches(), () -> "Dockerfile base image " + image + ": Renovate follows a "
                    + "tag written in FROM or in the default of an ARG that FROM uses, nothing else");
        }
    }

    @Test
    void baseImagesAreReadInBothFormsFromAndArgDefaultsAndStagesAreNotImages() {
        List<String> dockerfile = List.of(
                "ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-25",
                "ARG RUNTIME_IMAGE=\"eclipse-temurin:25-jre\"",
                "FROM ${BUILD_IMAGE} AS build",
                "FROM --platform=linux/amd64 debian:bookworm-slim@sha256:" + "ab".repeat(32) + " AS tools",
                "FROM build AS test",
                "FROM $RUNTIME_IMAGE",
                "ARG JRE_TAG",
                "FROM eclipse-temurin:${JRE_TAG}");

        List<String> images = baseImages(dockerfile);

        assertThat(images, contains("maven:3.9-eclipse-temurin-25", "debian:bookworm-slim@sha256:" + "ab".repeat(32),
                                    "eclipse-temurin:25-jre", "eclipse-temurin:${JRE_TAG}"));
        assertThat(images.stream().filter(i -> !IMAGE.matcher(i).matches()).toList(),
                   contains("eclipse-temurin:${JRE_TAG}"));
    }

    @Test
    void theNettyOverrideIsWatchedByTheRegexManager() throws Exception {
        JsonNode manager = config().path("customManagers").get(0);
        Pattern match = Pattern.compile(manager.path("matchStrings").get(0).asText());
        String pom = Files.readString(DeployTools.projectRoot().resolve("pom.xml"));
        String netty = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(DeployTools.projectRoot().resolve("pom.xml").toFile())
                .getElementsByTagName("version.lib.netty").item(0).getTextContent();

        Matcher found = match.matcher(pom);
        assertTrue(found.find(), "the regex manager finds version.lib.netty in pom.xml");
        assertEquals(netty, found.group("currentValue"));
        assertFalse(found.find(), "found once");
        assertEquals("io.netty:netty-bom", manager.path("depNameTemplate").asText());
    }

    @Test
    void theServicesOwnImageIsLeftToTheReleasePipeline() throws IOException {
        Set<String> disabled = new HashSet<>();
        for (JsonNode rule : config().path("packageRules")) {
            if (rule.has("enabled") && !rule.path("enabled").asBoolean()) {
                disabled.addAll(texts(rule.path("matchPackageNames")));
            }
        }
        List<String> ownImages = new ArrayList<>();
        for (String environment : Environments.all().toList()) {
            Path kustomization = DeployTools.projectRoot().resolve("k8s/overlays/" + environment + "/kustomization.yaml");
            Map<String, Object> yaml = new Yaml().load(Files.readString(kustomization));
            for (Object entry : (List<?>) yaml.getOrDefault("images", List.of())) {
                Map<?, ?> image = (Map<?, ?>) entry;
                ownImages.add(String.valueOf(image.containsKey("newName") ? image.get("newName") : image.get("name")));
            }
        }

        assertThat(ownImages.isEmpty(), is(false));
        assertThat(ownImages.stream().filter(image -> !disabled.contains(image)).toList(), is(empty()));
    }

    /**
     * The base images of a Dockerfile as Renovate's dockerfile manager resolves them: the image of each {@code FROM}
     * that is not an earlier stage, with {@code $NAME} / {@code ${NAME}} replaced by the default of an {@code ARG}
     * declared above it (a variable without a default stays as written).
     */
    static List<String> baseImages(List<String> dockerfile) {
        Map<String, String> args = new HashMap<>();
        Set<String> stages = new HashSet<>();
        List<String> images = new ArrayList<>();
        for (String line : dockerfile) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equalsIgnoreCase("ARG") && words.length > 1 && words[1].contains("=")) {
                String[] arg = words[1].split("=", 2);
                args.put(arg[0], arg[1].replaceAll("^[\"']|[\"']$", ""));
            } else if (words[0].equalsIgnoreCase("FROM")) {
                List<String> rest = Stream.of(words).skip(1).filter(w -> !w.startsWith("--")).toList();
                String image = VARIABLE.matcher(rest.getFirst()).replaceAll(
                        v -> Matcher.quoteReplacement(args.getOrDefault(v.group(1), v.group())));
                if (!stages.contains(image)) {
                    images.add(image);
                }
                if (rest.size() >= 3 && rest.get(1).equalsIgnoreCase("AS")) {
                    stages.add(rest.get(2));
                }
            }
        }
        return images;
    }

    private static JsonNode config() throws IOException {
        return new ObjectMapper().readTree(DeployTools.projectRoot().resolve(CONFIG).toFile());
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(node -> texts.add(node.asText()));
        return texts;
    }

    // Renovate writes a file pattern as /regex/ (a plain string would be a glob).
    private static Pattern javaPattern(String pattern) {
        assertTrue(pattern.startsWith("/") && pattern.endsWith("/"), () -> pattern + ": write file patterns as /regex/");
        return Pattern.compile(pattern.substring(1, pattern.length() - 1));
    }

    private static List<String> repositoryFiles() throws IOException {
        Path root = DeployTools.projectRoot();
        Set<String> skipped = Set.of("target", ".tools", ".git", "node_modules");
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(Files::isRegularFile)
                    .map(f -> root.relativize(f).toString())
                    .filter(f -> !skipped.contains(f.split("/")[0]))
                    .toList();
        }
    }
}
