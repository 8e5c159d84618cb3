package com.example.payments;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import com.example.payments.health.ObserverRequests;
import com.example.payments.http.Json;
import com.example.payments.http.ResponseBodies;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.openapi.OpenApiFormat;
import io.helidon.openapi.OpenApiManager;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import org.yaml.snakeyaml.Yaml;

/**
 * The business API's OpenAPI document ({@value #RESOURCE}) as Helidon's OpenAPI feature serves it: the YAML file
 * exactly as written (comments and key order kept), or the same content as JSON ({@code Accept: application/json} or
 * {@code ?format=json}); and {@code HEAD /openapi}, which the feature does not serve, with the same headers.
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
     * {@code HEAD /openapi}, which Helidon's OpenAPI feature does not serve: the status and headers {@code GET} sends,
     * {@code Content-Length} included. The media type is the one {@code ?format=} names ({@code json}:
     * {@code application/json}, {@code yaml}: {@code application/vnd.oai.openapi}), else the first of
     * {@link ObserverRequests#OPENAPI_TYPES} that {@code Accept} admits best, as the feature chooses; the query and
     * {@code Accept} were checked before ({@link ObserverRequests}: 400, 406).
     *
     * @param req the request
     * @param res answered 200 with the headers of the document in that media type
     */
    void head(ServerRequest req, ServerResponse res) {
        MediaType type = req.query().first("format").asOptional()
                .map(format -> "json".equalsIgnoreCase(format) ? MediaTypes.APPLICATION_JSON
                                                                 : MediaTypes.APPLICATION_OPENAPI_YAML)
                .or(() -> req.headers().bestAccepted(ObserverRequests.OPENAPI_TYPES.toArray(MediaType[]::new)))
                .orElse(MediaTypes.APPLICATION_OPENAPI_YAML);
        boolean json = type.equals(MediaTypes.APPLICATION_JSON) || type.equals(MediaTypes.APPLICATION_OPENAPI_JSON);
        res.header(HeaderNames.CONTENT_TYPE, type.text()).header(HeaderValues.X_CONTENT_TYPE_OPTIONS_NOSNIFF);
        String content = json ? format(yaml, OpenApiFormat.JSON) : yaml;
        ResponseBodies.send(req, res, content.getBytes(StandardCharsets.UTF_8));
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
