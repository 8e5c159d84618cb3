package com.example.payments.deploy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CycloneDX software bill of materials that {@code mvn package} writes ({@code target/bom.json} and
 * {@code target/bom.xml}, cyclonedx-maven-plugin) describes exactly what ships: one component, with its package URL
 * and SHA-256, for every jar of {@code target/libs/} (the runtime class path the image copies), and nothing the tests
 * alone use.
 */
class SbomIT {

    private static final Path TARGET = Path.of("target");

    @Test
    void theBuildWritesACycloneDxBomOfTheApplicationInJsonAndXml() throws IOException {
        JsonNode bom = bom();

        assertEquals("CycloneDX", bom.path("bomFormat").asText());
        assertThat(bom.path("specVersion").asText(), startsWith("1."));
        JsonNode application = bom.path("metadata").path("component");
        assertEquals("payments-authorization", application.path("name").asText());
        assertEquals("application", application.path("type").asText());
        String xml = Files.readString(TARGET.resolve("bom.xml"));
        assertTrue(xml.contains("http://cyclonedx.org/schema/bom/") && xml.contains("<name>lettuce-core</name>"),
                   "target/bom.xml is the same bill of materials in XML");
    }

    @Test
    void everyShippedJarIsAComponentWithItsPackageUrlAndHash() throws Exception {
        Map<String, JsonNode> components = new HashMap<>();
        for (JsonNode component : bom().path("components")) {
            components.put(component.path("name").asText() + "-" + component.path("version").asText() + ".jar",
                           component);
        }
        Set<String> jars = new TreeSet<>();
        try (Stream<Path> libs = Files.list(TARGET.resolve("libs"))) {
            libs.map(p -> p.getFileName().toString()).forEach(jars::add);
        }

        Set<String> unlisted = new TreeSet<>(jars);
        unlisted.removeAll(components.keySet());
        Set<String> notShipped = new TreeSet<>(components.keySet());
        notShipped.removeAll(jars);
        assertThat("jars in target/libs missing from the SBOM (left over from an earlier build? mvn clean)", unlisted,
                   is(empty()));
        assertThat("SBOM components that the jar does not ship (test scope?)", notShipped, is(empty()));
        assertThat(jars, hasItems("helidon-webserver-4.5.0.jar", "helidon-webserver-observe-metrics-4.5.0.jar"));
        assertTrue(jars.stream().anyMatch(jar -> jar.startsWith("lettuce-core-")), "lettuce-core is a runtime dependency");
        for (String jar : jars) {
            JsonNode component = components.get(jar);
            assertThat(jar, component.path("purl").asText(), startsWith("pkg:maven/" + component.path("group").asText()
                                                                       + "/" + component.path("name").asText() + "@"));
            assertEquals(sha256(TARGET.resolve("libs").resolve(jar)), hash(component, "SHA-256"), jar);
        }
    }

    @Test
    void testOnlyLibrariesAreNotInTheBom() throws IOException {
        Set<String> names = new TreeSet<>();
        bom().path("components").forEach(component -> names.add(component.path("name").asText()));

        for (String testOnly : List.of("junit-jupiter-api", "mockito-core", "hamcrest-all", "kubernetes-client-api",
                                       "helidon-webserver-testing-junit5")) {
            assertFalse(names.contains(testOnly), () -> testOnly + " is a test dependency, listed in the SBOM");
        }
    }

    private static JsonNode bom() throws IOException {
        Path json = TARGET.resolve("bom.json");
        assertTrue(Files.isRegularFile(json), "mvn package writes target/bom.json (cyclonedx-maven-plugin)");
        return new ObjectMapper().readTree(json.toFile());
    }

    private static String hash(JsonNode component, String algorithm) {
        for (JsonNode hash : component.path("hashes")) {
            if (algorithm.equals(hash.path("alg").asText())) {
                return hash.path("content").asText();
            }
        }
        throw new AssertionError(component.path("name").asText() + " has no " + algorithm + " hash");
    }

    private static String sha256(Path file) throws IOException, NoSuchAlgorithmException {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[64 * 1024];
            for (int n = in.read(buffer); n > 0; n = in.read(buffer)) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
