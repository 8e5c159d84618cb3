package com.example.payments.authentication;

import java.util.Set;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Authenticates every request of the business listener, except on its public paths, before any handler runs: a
 * refusal is answered 401 here (after the listener's own 413, before 415 and everything else), an
 * identity is attached to the request as its {@link Caller}.
 *
 * <p>Deny by default: a route a fork adds is authenticated unless its path is listed as public. Public is
 * {@code /ping} only: the loopback prober calls it without credentials, and it touches nothing. The health listener
 * has no such filter: its probes come from the kubelet, which sends no credentials, and its port is not exposed by
 * the Service (docs/security.md).
 */
public final class AuthenticationFilter implements Filter {

    private final Authenticator authenticator;
    private final AuthFailures failures;
    private final Set<String> publicPaths;

    private AuthenticationFilter(Authenticator authenticator, AuthFailures failures, Set<String> publicPaths) {
        this.authenticator = authenticator;
        this.failures = failures;
        this.publicPaths = Set.copyOf(publicPaths);
    }

    /**
     * Creates the filter.
     *
     * @param authenticator the seam
     * @param failures      answers, counts and logs refusals
     * @param publicPaths   exact paths served without authentication, e.g. {@code /ping}
     * @return the filter
     */
    public static AuthenticationFilter create(Authenticator authenticator, AuthFailures failures,
                                              Set<String> publicPaths) {
        return new AuthenticationFilter(authenticator, failures, publicPaths);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (publicPaths.contains(req.path().path())) {
            chain.proceed();
            return;
        }
        switch (authenticator.authenticate(req)) {
        case Authentication.Authenticated authenticated -> {
            authenticated.caller().attachTo(req);
            chain.proceed();
        }
        case Authentication.Refused refused -> failures.unauthenticated(req, res, refused);
        }
    }
}
