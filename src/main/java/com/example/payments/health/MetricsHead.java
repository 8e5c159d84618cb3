package com.example.payments.health;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

import com.example.payments.http.ResponseBodies;

import io.helidon.common.HelidonServiceLoader;
import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MeterRegistryFormatter;
import io.helidon.metrics.api.MetricsConfig;
import io.helidon.metrics.api.SystemTagsManager;
import io.helidon.metrics.spi.MeterRegistryFormatterProvider;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * {@code HEAD /metrics}: the status and headers {@code GET /metrics} gets, without the body (RFC 9110 section 9.3.2).
 * Helidon's metrics observer serves {@code GET} only; this renders the same exposition with the same formatters and
 * the same selections ({@code scope}, {@code name}), to send its length, and negotiates the media type the same way
 * (text, OpenMetrics, JSON; else 406). {@link ObserverRequests} answers the errors of both first.
 */
public final class MetricsHead implements Handler {

    /** The path of the metrics endpoint on the health listener. */
    public static final String PATH = "/metrics";

    private final MeterRegistry meters;
    private final MetricsConfig config = MetricsConfig.create();

    private MetricsHead(MeterRegistry meters) {
        this.meters = meters;
    }

    /**
     * Creates the handler.
     *
     * @param meters the registry {@code GET /metrics} serves
     * @return the handler
     */
    public static MetricsHead create(MeterRegistry meters) {
        return new MetricsHead(meters);
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) {
        res.header(HeaderValues.CACHE_NO_CACHE).header(HeaderValues.X_CONTENT_TYPE_OPTIONS_NOSNIFF);
        Optional<MediaType> type = mediaType(req);
        if (type.isEmpty()) {
            res.status(Status.NOT_ACCEPTABLE_406).send();
            return;
        }
        Optional<Object> exposition = exposition(type.get(), req.query().all(SCOPE, List::of),
                                                 req.query().all(NAME, List::of));
        if (exposition.isEmpty()) {
            res.status(Status.NOT_FOUND_404).send();
            return;
        }
        res.headers().contentType(type.get());
        ResponseBodies.send(req, res, exposition.get().toString().getBytes(StandardCharsets.UTF_8));
    }

    /** The query parameter that selects scopes, as Helidon's metrics observer reads it. */
    static final String SCOPE = "scope";
    /** The query parameter that selects meters by name, as Helidon's metrics observer reads it. */
    static final String NAME = "name";

    // The exposition's media type, negotiated as Helidon's observer does: text, OpenMetrics, JSON; empty for 406.
    static Optional<MediaType> mediaType(ServerRequest req) {
        return req.headers().bestAccepted(MediaTypes.TEXT_PLAIN, MediaTypes.APPLICATION_OPENMETRICS_TEXT,
                                          MediaTypes.APPLICATION_JSON);
    }

    // What GET /metrics answers for these selections, rendered by the same formatters; empty when nothing matches.
    Optional<Object> exposition(MediaType type, List<String> scopes, List<String> names) {
        return HelidonServiceLoader.create(ServiceLoader.load(MeterRegistryFormatterProvider.class)).stream()
                .map(provider -> provider.formatter(type, config, meters, SystemTagsManager.instance().scopeTagName(),
                                                    scopes, names))
                .flatMap(Optional::stream)
                .findFirst()
                .flatMap(MeterRegistryFormatter::format);
    }
}
