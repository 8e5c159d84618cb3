package com.example.payments.health;

import com.example.payments.http.ProblemResponses;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Until startup is complete, answers every business route except {@code /ping} with 503 problem and
 * {@code Retry-After}: {@code /ping} must answer, because the first successful loopback probe is what completes
 * startup.
 */
public final class StartupGateFilter implements Filter {

    private final HealthState state;

    private StartupGateFilter(HealthState state) {
        this.state = state;
    }

    /**
     * Creates the gate.
     *
     * @param state where startup completion is read
     * @return the filter
     */
    public static StartupGateFilter create(HealthState state) {
        return new StartupGateFilter(state);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (state.startupComplete() || "/ping".equals(req.path().path())) {
            chain.proceed();
            return;
        }
        ProblemResponses.sendRetryable(req, res, ProblemResponses.starting(), 1);
    }
}
