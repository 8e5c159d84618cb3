package com.example.payments;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import com.example.payments.http.Json;

import io.helidon.openapi.OpenApiFormat;
import io.helidon.openapi.OpenApiManager;
import org.yaml.snakeyaml.Yaml;

/**
 * The business API's OpenAPI document ({@value #RESOURCE}) as Helidon's OpenAPI feature serves it: the YAML file
 * exactly as written (comments and key order kept, so {@code HEAD /openapi} can announce its length), or the same
 * content as JSON ({@code Accept: application/json} or {@code ?format=json}).
 */
final class OpenApiDocument implements OpenApiManager<String> {

    /** The document on the classpath. */
    static final String RESOURCE = "META-INF/openapi.yaml";

    private final String yaml;

    private OpenApiDocument(String yaml) {
        this.yaml = yaml;
    }

    /**
     * Reads the document from the classpath.
     *
     * @return the document
     * @throws IllegalStateException when it is not on the classpath (a packaging bug)
     */
    static OpenApiDocument load() {
        try (InputStream in = OpenApiDocument.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the classpath");
            }
            return new OpenApiDocument(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The YAML document's bytes, as {@code GET /openapi} sends them by default.
     *
     * @return UTF-8 bytes
     */
    byte[] yamlBytes() {
        return yaml.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String name() {
        return "verbatim";
    }

    @Override
    public String type() {
        return "verbatim";
    }

    @Override
    public String load(String content) {
        return content;
    }

    @Override
    public String format(String content, OpenApiFormat format) {
        return format == OpenApiFormat.JSON
               ? new String(Json.bytes(new Yaml().load(content)), StandardCharsets.UTF_8) : content;
    }
}
