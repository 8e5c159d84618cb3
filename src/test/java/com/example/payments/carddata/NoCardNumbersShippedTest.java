package com.example.payments.carddata;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;

/**
 * Card numbers belong in tests and docs only: no line of what ships or configures the service (the jar's resources,
 * the per-environment configs, the manifests, the Dockerfile) holds anything {@link PanDetector} takes for a card
 * number, test cards included, so nothing built from them can echo one into a log, a document or a manifest.
 */
class NoCardNumbersShippedTest {

    private static final List<Path> SHIPPED = List.of(Path.of("src/main/resources"), Path.of("config"),
                                                      Path.of("k8s"), Path.of("Dockerfile"));

    @Test
    void noShippedFileHoldsACardNumber() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path root : SHIPPED) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) {
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (PanDetector.containsPan(lines.get(i))) {
                            found.add(file + ":" + (i + 1));
                        }
                    }
                }
            }
        }
        assertThat("lines holding a card number", found, empty());
    }
}
