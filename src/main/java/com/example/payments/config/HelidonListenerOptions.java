package com.example.payments.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The options Helidon's WebServer reads directly under a listener node ({@code server}, {@code health-server}):
 * {@code port}, {@code max-payload-size}, {@code connection-config}, {@code features}, ... Taken from the config
 * metadata Helidon generates into its jars ({@code META-INF/helidon/config-metadata.json}: the options of
 * {@code io.helidon.webserver.WebServer} and of {@code io.helidon.webserver.ListenerConfig}, which it inherits), so
 * they follow the Helidon version on the classpath. Only the first level is known here; what lies below an option
 * ({@code connection-config.read-timeout}, {@code tls.*}, {@code features.*}) is Helidon's to read.
 */
final class HelidonListenerOptions {

    private static final String METADATA = "META-INF/helidon/config-metadata.json";
    private static final Set<String> TYPES = Set.of("io.helidon.webserver.WebServer",
                                                    "io.helidon.webserver.ListenerConfig");

    private HelidonListenerOptions() {
    }

    /**
     * The first-level option names of a listener node.
     *
     * @return e.g. {@code port}, {@code max-tcp-connections}; empty when no Helidon metadata is on the classpath (then
     *         nothing under the listener nodes can be told apart, and none of it is refused)
     */
    static Set<String> load() {
        Set<String> options = new TreeSet<>();
        ObjectMapper mapper = new ObjectMapper();
        try {
            for (URL url : Collections.list(HelidonListenerOptions.class.getClassLoader().getResources(METADATA))) {
                try (InputStream in = url.openStream()) {
                    for (JsonNode module : mapper.readTree(in)) {
                        for (JsonNode type : module.path("types")) {
                            if (TYPES.contains(type.path("type").asText())) {
                                type.path("options").forEach(option -> options.add(option.path("key").asText()));
                            }
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Helidon's config metadata cannot be read from the classpath", e);
        }
        options.remove("");
        return options;
    }
}
