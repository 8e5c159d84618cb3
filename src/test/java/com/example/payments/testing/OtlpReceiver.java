package com.example.payments.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * A tiny OTLP/HTTP trace receiver on 127.0.0.1 for tests: accepts {@code POST /v1/traces} in protobuf, as a collector
 * does, and keeps every span it decodes with the resource it came with.
 */
public final class OtlpReceiver implements AutoCloseable {

    /**
     * A received span.
     *
     * @param resource the resource of its batch (service.name, deployment.environment.name, ...)
     * @param span     the span as sent
     */
    public record Received(Resource resource, Span span) {
    }

    private final List<Received> spans = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private final WebServer server;

    private OtlpReceiver() {
        server = WebServer.builder().host("127.0.0.1").port(0).featuresDiscoverServices(false).shutdownHook(false)
                .routing(routing -> routing.post("/v1/traces", (req, res) -> {
                    ExportTraceServiceRequest export = ExportTraceServiceRequest.parseFrom(
                            req.content().as(byte[].class));
                    requests.incrementAndGet();
                    for (ResourceSpans resourceSpans : export.getResourceSpansList()) {
                        for (ScopeSpans scope : resourceSpans.getScopeSpansList()) {
                            scope.getSpansList().forEach(span -> spans.add(new Received(resourceSpans.getResource(),
                                                                                        span)));
                        }
                    }
                    res.status(Status.OK_200).header(HeaderNames.CONTENT_TYPE, "application/x-protobuf")
                            .send(ExportTraceServiceResponse.getDefaultInstance().toByteArray());
                }))
                .build()
                .start();
    }

    /**
     * Starts a receiver on a free port.
     *
     * @return the running receiver
     */
    public static OtlpReceiver start() {
        return new OtlpReceiver();
    }

    /**
     * The base URI, e.g. {@code http://127.0.0.1:40123} (the SDK appends {@code /v1/traces} to a base endpoint).
     *
     * @return the base URI
     */
    public String baseUri() {
        return "http://127.0.0.1:" + server.port();
    }

    /**
     * The traces URI, e.g. {@code http://127.0.0.1:40123/v1/traces}.
     *
     * @return the URI
     */
    public String tracesUri() {
        return baseUri() + "/v1/traces";
    }

    /**
     * Every span received so far.
     *
     * @return spans in arrival order
     */
    public List<Received> spans() {
        return List.copyOf(spans);
    }

    /**
     * The export requests received so far.
     *
     * @return count of {@code POST /v1/traces}
     */
    public int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        server.stop();
    }
}
