package com.example.payments.health;

import java.net.http.HttpResponse;

import com.example.payments.testing.Http;

import io.helidon.webserver.WebServer;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Until startup is complete, business routes other than /ping answer 503 problem with Retry-After.
 */
class StartupGateFilterTest {

    @Test
    void businessRoutesWaitForStartupButPingAnswers() throws Exception {
        HealthState state = new HealthState();
        WebServer server = WebServer.builder()
                .port(0)
                .featuresDiscoverServices(false)
                .shutdownHook(false)
                .routing(routing -> routing.addFilter(StartupGateFilter.create(state))
                        .get("/ping", (req, res) -> res.send("pong"))
                        .get("/v1/authorizations/{id}", (req, res) -> res.send("found")))
                .build()
                .start();
        try {
            String base = "http://127.0.0.1:" + server.port();
            assertThat(Http.get(base + "/ping").statusCode(), is(200));
            HttpResponse<String> starting = Http.get(base + "/v1/authorizations/x");
            assertThat(starting.statusCode(), is(503));
            assertThat(starting.headers().firstValue("Retry-After").orElseThrow(), is("1"));
            assertThat(starting.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));

            state.markWired();
            assertThat("wired but never probed", Http.get(base + "/v1/authorizations/x").statusCode(), is(503));
            state.probed(PortStatus.SERVING);
            assertThat(Http.get(base + "/v1/authorizations/x").statusCode(), is(200));
            // Once complete, startup stays complete even when a later probe fails.
            state.probed(PortStatus.NOT_RESPONDING);
            assertThat(state.startupComplete(), is(true));
        } finally {
            server.stop();
        }
    }
}
