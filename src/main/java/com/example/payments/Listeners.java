package com.example.payments;

import java.net.URI;
import java.util.function.Consumer;

import com.example.payments.config.ConfigurationException;
import com.example.payments.health.ObserverRequests;
import com.example.payments.http.EvictingConnectionCap;
import com.example.payments.http.Json;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.http.RequestDeadlines;
import com.example.payments.observability.AccessLog;

import io.helidon.config.Config;
import io.helidon.http.media.MediaContext;
import io.helidon.http.media.jackson.JacksonSupport;
import io.helidon.openapi.OpenApiFeature;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.metrics.MetricsObserver;

/**
 * The two {@link WebServer}s of the process, configured the way the probes need them: each from its own config node
 * ({@code server}, {@code health-server}), no feature discovery (it would mount {@code /observe/*} on the business
 * port and shadow {@code /health}), no Helidon shutdown hook (Main owns SIGTERM), and a started server really
 * listening or startup fails.
 *
 * <p>Both are bounded against hostile and broken clients the same way ({@link ListenerBounds}).
 */
final class Listeners {

    /** Largest accepted request body on the business listener: 16 KiB. */
    static final long MAX_PAYLOAD_BYTES = 16 * 1024;
    /** Path of the OpenAPI document on the health listener. */
    static final String OPENAPI_PATH = ObserverRequests.OPENAPI_PATH;
    /** The loopback prober's route on the business listener: public, neither logged by the access log nor traced. */
    static final String PING = "/ping";

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
        ProblemDirectHandler problems = ProblemDirectHandler.create(MAX_PAYLOAD_BYTES, (method, status, requestId) -> {
            metrics.answered(method, status, requestId);
            accessLog.answered(method, status, requestId);
        });
        WebServer business = ListenerBounds.bounded(WebServer.builder().config(config.get("server")),
                                                    settings.http().business(), null, deadlines, onResponse, problems)
                .port(settings.businessPort())
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .shutdownGracePeriod(settings.shutdown().drainTimeout())
                .maxPayloadSize(MAX_PAYLOAD_BYTES)
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
        EvictingConnectionCap evicting = EvictingConnectionCap.create(settings.http().health().maxTcpConnections());
        WebServer health = ListenerBounds.bounded(WebServer.builder().config(config.get("health-server")),
                                                  settings.http().health(), evicting, deadlines, () -> { },
                                                  ProblemDirectHandler.withoutBodies())
                .port(settings.healthPort())
                .maxPayloadSize(0)
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .addFeature(ObserveFeature.builder()
                                    .observersDiscoverServices(false)
                                    .endpoint("/")
                                    .addObserver(MetricsObserver.builder().endpoint("metrics").build())
                                    .build())
                // The business API's contract, served here and not on the business port: each port serves only its
                // own routes.
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
        return URI.create("http://" + host + ":" + port + PING);
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
}
