package com.example.payments;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

import com.example.payments.config.ConfigurationException;
import com.example.payments.http.EvictingConnectionCap;
import com.example.payments.http.Http1Listeners;
import com.example.payments.http.HttpSettings;
import com.example.payments.http.Json;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.http.StrictHttp1;
import com.example.payments.lifecycle.ShutdownSettings;
import com.example.payments.observability.AccessLog;

import io.helidon.config.Config;
import io.helidon.http.DirectHandler;
import io.helidon.http.DirectHandler.EventType;
import io.helidon.http.Status;
import io.helidon.http.media.MediaContext;
import io.helidon.http.media.jackson.JacksonSupport;
import io.helidon.openapi.OpenApiFeature;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.metrics.MetricsObserver;
import io.helidon.webserver.spi.ServerConnectionSelector;

/**
 * The two {@link WebServer}s of the process, configured the way the probes need them: each from its own config node
 * ({@code server}, {@code health-server}), no feature discovery (it would mount {@code /observe/*} on the business
 * port and shadow {@code /health}), no Helidon shutdown hook (Main owns SIGTERM), and a started server really
 * listening or startup fails.
 *
 * <p>Both are bounded against hostile and broken clients (docs/hostile-clients.md): a connection cap and idle timeout
 * from their config nodes, a header deadline, problem bodies for what Helidon answers before routing, a request line
 * of at most {@value #MAX_REQUEST_LINE_BYTES} bytes (414 beyond) and a header section of at most
 * {@value #MAX_HEADER_SECTION_BYTES} bytes (431 beyond), and Helidon's HTTP/1.1 parser held to RFC 9112 where it is
 * lenient ({@link StrictHttp1}: a method that is not a token, chunked framing; 400 and the connection closed).
 */
final class Listeners {

    /** Largest accepted request body on the business listener: 16 KiB. */
    static final long MAX_PAYLOAD_BYTES = 16 * 1024;
    /** Longest request line (method, target, version): 4 KiB, Helidon's default; longer is 414. */
    static final int MAX_REQUEST_LINE_BYTES = 4096;
    /** Largest header section: 16 KiB, Helidon's default; larger is 431. */
    static final int MAX_HEADER_SECTION_BYTES = 16 * 1024;
    /**
     * The health listener's Helidon cap, as a multiple of {@code health-server.max-tcp-connections}: beyond that cap
     * its connections are closed once they wait longer than {@link EvictingConnectionCap#GRACE}, and this leaves them
     * room meanwhile (docs/hostile-clients.md).
     */
    static final int HEALTH_CEILING = 4;

    /** Path of the OpenAPI document on the health listener. */
    static final String OPENAPI_PATH = "/openapi";

    private Listeners() {
    }

    /**
     * Starts the business listener: problem bodies for whatever Helidon answers before routing, 16 KiB bodies, JSON
     * through Helidon's Jackson media support, the access log ({@code access-log.*}), and a shutdown grace period equal to the drain timeout.
     *
     * @param config     the whole configuration
     * @param settings   validated settings
     * @param deadlines  the business listener's header and body deadlines
     * @param onResponse told of every response the listener writes, of any status (its progress, for liveness)
     * @param metrics    counts the answers written before routing in the request metrics (the access log too)
     * @param routing    registers the routes
     * @return the listening server
     * @throws ConfigurationException naming {@code server.port} when it cannot listen
     */
    static WebServer startBusiness(Config config, AppSettings settings, RequestDeadlines deadlines,
                                   Runnable onResponse, ProblemDirectHandler.Unrouted metrics,
                                   Consumer<HttpRouting.Builder> routing) {
        ProblemDirectHandler.Unrouted accessLog = AccessLog.unrouted(settings.accessLog());
        WebServer business = bounded(WebServer.builder().config(config.get("server")), settings.http().business(),
                                     null, deadlines, onResponse, ProblemDirectHandler.create(MAX_PAYLOAD_BYTES,
                (method, status, requestId) -> {
                    metrics.answered(method, status, requestId);
                    accessLog.answered(method, status, requestId);
                }))
                .port(settings.businessPort())
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .shutdownGracePeriod(settings.shutdown().mode() == ShutdownSettings.Mode.GRACEFUL
                                             ? settings.shutdown().drainTimeout() : Duration.ofMillis(500))
                .maxPayloadSize(MAX_PAYLOAD_BYTES)
                .addFeature(AccessLog.feature(settings.accessLog(), Set.of(Main.PING)))
                .mediaContext(MediaContext.builder()
                                      .mediaSupportsDiscoverServices(false)
                                      .addMediaSupport(JacksonSupport.create(Json.mapper()))
                                      .build())
                .routing(routing)
                .build()
                .start();
        requireListening(business, "server.port", settings.businessPort());
        return business;
    }

    /**
     * Starts the health listener: the probe routes, {@code /metrics} (only the metrics observer, at the root) and
     * {@code /openapi}, the business API's OpenAPI document (Helidon's OpenAPI feature; YAML, or JSON with
     * {@code Accept: application/json} or {@code ?format=json}).
     *
     * <p>It takes no request body (any is 413) and serves {@code GET} and {@code HEAD} only (the routing's filter).
     *
     * @param config    the whole configuration
     * @param settings  validated settings
     * @param deadlines the health listener's header deadline
     * @param routing   registers the probe routes
     * @param business  stopped when the health listener cannot start, so no half-started process is left behind
     * @param openApi   the document {@code /openapi} serves
     * @return the listening server
     * @throws ConfigurationException naming {@code health-server.port} when it cannot listen
     */
    static WebServer startHealth(Config config, AppSettings settings, RequestDeadlines deadlines,
                                 Consumer<HttpRouting.Builder> routing, WebServer business, OpenApiDocument openApi) {
        WebServer health = bounded(WebServer.builder().config(config.get("health-server")), settings.http().health(),
                                   EvictingConnectionCap.create(settings.http().health().maxTcpConnections()),
                                   deadlines, () -> { }, ProblemDirectHandler.withoutBodies())
                .port(settings.healthPort())
                .maxPayloadSize(0)
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .addFeature(ObserveFeature.builder()
                                    .observersDiscoverServices(false)
                                    .endpoint("/")
                                    .addObserver(MetricsObserver.builder().endpoint("metrics").build())
                                    .build())
                // The business API's contract, served here and not on the business port (DESIGN §2).
                .addFeature(OpenApiFeature.builder()
                                    .webContext(OPENAPI_PATH)
                                    .staticFile(OpenApiDocument.RESOURCE)
                                    .manager(openApi)
                                    .build())
                .routing(routing)
                .build();
        // Not on the business listener's virtual threads: with one CPU they have one carrier, which a saturated
        // business listener keeps busy for seconds (docs/hostile-clients.md).
        PlatformThreadListener.onPlatformThreads(health);
        health.start();
        if (!health.isRunning() || health.port() <= 0) {
            business.stop();
        }
        requireListening(health, "health-server.port", settings.healthPort());
        return health;
    }

    /**
     * Where the loopback prober reaches the business listener: loopback when it listens on every interface, else the
     * address it is bound to.
     *
     * @param config the whole configuration ({@code server.host})
     * @param port   the business listener's bound port
     * @return e.g. {@code http://127.0.0.1:8080/ping}
     */
    static URI pingUri(Config config, int port) {
        String host = config.get("server.host").asString().orElse("0.0.0.0").trim();
        if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            host = "127.0.0.1";
        } else if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + port + "/ping");
    }

    // Helidon logs a failed bind and carries on with port -1: a process that serves half its listeners (or none)
    // while claiming to run is worse than one that exits and gets restarted.
    private static void requireListening(WebServer server, String key, int port) {
        if (!server.isRunning() || server.port() <= 0) {
            server.stop();
            throw new ConfigurationException(key, "cannot listen on port " + port + " (in use, or not permitted); "
                                                  + "allowed: a free port from 0 to 65535");
        }
    }

    // evicting: null for Helidon's cap (new connections wait in the accept queue); else the cap that makes room, with
    // Helidon's cap four times as high: it holds the connections still in their grace and the closed ones whose threads
    // have not ended yet (EvictingConnectionCap).
    private static WebServerConfig.Builder bounded(WebServerConfig.Builder builder, HttpSettings.ListenerLimits limits,
                                                   EvictingConnectionCap evicting, RequestDeadlines deadlines,
                                                   Runnable onResponse, ProblemDirectHandler problems) {
        Http1ConnectionListener responses = new Http1ConnectionListener() {
            @Override
            public void status(ConnectionContext ctx, Status status) {
                onResponse.run();
            }
        };
        List<Http1ConnectionListener> receive = new ArrayList<>(List.of(deadlines.headers()));
        List<Http1ConnectionListener> send = new ArrayList<>(List.of(responses));
        if (evicting != null) {
            receive.add(evicting.requestHeads());
            send.add(evicting.requestHeads());
        }
        // One receive and one send listener each (Http1Listeners says why).
        ServerConnectionSelector selector = StrictHttp1.create(Http1Config.builder()
                .maxPrologueLength(MAX_REQUEST_LINE_BYTES)
                .maxHeadersSize(MAX_HEADER_SECTION_BYTES)
                .addReceiveListener(Http1Listeners.of(receive))
                .addSendListener(Http1Listeners.of(send))
                .build());
        return builder
                .maxTcpConnections(evicting == null ? limits.maxTcpConnections()
                                                    : HEALTH_CEILING * limits.maxTcpConnections())
                .idleConnectionTimeout(limits.idleConnectionTimeout())
                .idleConnectionPeriod(limits.idleConnectionPeriod())
                // Hands Helidon's messages to the direct handler, which needs one to tell 431 from 400; they never
                // reach a response body.
                .errorHandling(errors -> errors.includeEntity(true))
                .directHandlers(problemHandlers(problems))
                // Ours only: a discovered default HTTP/1.1 protocol beside it would make Helidon sniff every new
                // connection for the right one, and close an HTTP/1.0 or HTTP/2.0 request line without an answer.
                // Helidon's HTTP/1.1, with request methods and chunk framing checked (see StrictHttp1).
                .protocolsDiscoverServices(false)
                .addConnectionSelector(evicting == null ? selector : evicting.around(selector));
    }

    private static DirectHandlers problemHandlers(DirectHandler handler) {
        DirectHandlers.Builder builder = DirectHandlers.builder();
        for (EventType type : EventType.values()) {
            builder.addHandler(type, handler);
        }
        return builder.build();
    }
}
