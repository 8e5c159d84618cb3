package com.example.payments;

import java.net.URI;
import java.time.Duration;
import java.util.function.Consumer;

import com.example.payments.config.ConfigurationException;
import com.example.payments.http.Json;
import com.example.payments.http.ProblemDirectHandler;
import com.example.payments.lifecycle.ShutdownSettings;

import io.helidon.config.Config;
import io.helidon.http.DirectHandler.EventType;
import io.helidon.http.media.MediaContext;
import io.helidon.http.media.jackson.JacksonSupport;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.observe.ObserveFeature;
import io.helidon.webserver.observe.metrics.MetricsObserver;

/**
 * The two {@link WebServer}s of the process, configured the way DESIGN §2 needs them: each from its own config node
 * ({@code server}, {@code health-server}), no feature discovery (it would mount {@code /observe/*} on the business
 * port and shadow {@code /health}), no Helidon shutdown hook (Main owns SIGTERM), and a started server really
 * listening or startup fails.
 */
final class Listeners {

    /** Largest accepted request body on the business listener: 16 KiB. */
    static final long MAX_PAYLOAD_BYTES = 16 * 1024;

    private Listeners() {
    }

    /**
     * Starts the business listener: problem bodies for whatever Helidon answers before routing, 16 KiB bodies, JSON
     * through Helidon's Jackson media support, and a shutdown grace period equal to the drain timeout.
     *
     * @param config   the whole configuration
     * @param settings validated settings
     * @param routing  registers the routes
     * @return the listening server
     * @throws ConfigurationException naming {@code server.port} when it cannot listen
     */
    static WebServer startBusiness(Config config, AppSettings settings, Consumer<HttpRouting.Builder> routing) {
        WebServer business = WebServer.builder()
                .config(config.get("server"))
                .port(settings.businessPort())
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .shutdownGracePeriod(settings.shutdown().mode() == ShutdownSettings.Mode.GRACEFUL
                                             ? settings.shutdown().drainTimeout() : Duration.ofMillis(500))
                .maxPayloadSize(MAX_PAYLOAD_BYTES)
                .directHandlers(problemHandlers())
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
     * Starts the health listener: the probe routes and {@code /metrics} (only the metrics observer, at the root).
     *
     * @param config   the whole configuration
     * @param settings validated settings
     * @param routing  registers the probe routes
     * @param business stopped when the health listener cannot start, so no half-started process is left behind
     * @return the listening server
     * @throws ConfigurationException naming {@code health-server.port} when it cannot listen
     */
    static WebServer startHealth(Config config, AppSettings settings, Consumer<HttpRouting.Builder> routing,
                                 WebServer business) {
        WebServer health = WebServer.builder()
                .config(config.get("health-server"))
                .port(settings.healthPort())
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .addFeature(ObserveFeature.builder()
                                    .observersDiscoverServices(false)
                                    .endpoint("/")
                                    .addObserver(MetricsObserver.builder().endpoint("metrics").build())
                                    .build())
                .routing(routing)
                .build()
                .start();
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

    private static DirectHandlers problemHandlers() {
        ProblemDirectHandler handler = ProblemDirectHandler.create(MAX_PAYLOAD_BYTES);
        DirectHandlers.Builder builder = DirectHandlers.builder();
        for (EventType type : EventType.values()) {
            builder.addHandler(type, handler);
        }
        return builder.build();
    }
}
