package com.example.payments.health;

import io.helidon.http.HeaderNames;
import io.helidon.webclient.api.ClientResponseTyped;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.testing.junit5.DirectClient;
import io.helidon.webserver.testing.junit5.RoutingTest;
import io.helidon.webserver.testing.junit5.SetUpRoute;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Until startup is complete, business routes other than /ping answer 503 problem with Retry-After. Runs the
 * production filter in memory with Helidon's test kit ({@code @RoutingTest}, no socket); the two routes behind it
 * are stand-ins, the filter only looks at the path.
 */
@RoutingTest
class StartupGateTest {

    // One test in this class: the state the routing (set up once, statically) and the test share.
    private static final HealthState STATE = new HealthState();

    private final DirectClient client;

    StartupGateTest(DirectClient client) {
        this.client = client;
    }

    @SetUpRoute
    static void routing(HttpRouting.Builder routing) {
        routing.addFilter(STATE.startupGate())
                .get("/ping", (req, res) -> res.send("pong"))
                .get("/v1/authorizations/{id}", (req, res) -> res.send("found"));
    }

    private int status(String path) {
        try (var response = client.get(path).request()) {
            return response.status().code();
        }
    }

    @Test
    void businessRoutesWaitForStartupButPingAnswers() {
        assertThat(status("/ping"), is(200));
        ClientResponseTyped<String> starting = client.get("/v1/authorizations/x").request(String.class);
        assertThat(starting.status().code(), is(503));
        assertThat(starting.headers().first(HeaderNames.RETRY_AFTER).orElseThrow(), is("1"));
        assertThat(starting.headers().first(HeaderNames.CONTENT_TYPE).orElseThrow(), is("application/problem+json"));

        STATE.markWired();
        assertThat("wired but never probed", status("/v1/authorizations/x"), is(503));
        STATE.probed(PortStatus.SERVING);
        assertThat(status("/v1/authorizations/x"), is(200));
        // Once complete, startup stays complete even when a later probe fails.
        STATE.probed(PortStatus.NOT_RESPONDING);
        assertThat(STATE.startupComplete(), is(true));
    }
}
