package com.example.payments.authentication;

import java.lang.System.Logger.Level;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;

import io.helidon.http.HeaderNames;
import io.helidon.http.PathMatcher;
import io.helidon.http.PathMatchers;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * Answers, counts and logs every authentication and access failure of the business listener, in one place: the 401 of
 * {@link AuthenticationFilter} and the 403 a handler sends when a caller names another merchant.
 *
 * <p>Each failure adds one to {@code auth_failures_total{reason}} ({@code missing}, {@code malformed},
 * {@code unknown}, {@code merchant_mismatch}, or a reason of a fork's authenticator) and writes one log line with the
 * reason, the method, the route template and the peer address; never the credentials, not even part of them, and
 * never the path a client typed. Problems go
 * through {@link ProblemResponses}, so a {@code HEAD} gets no body and a request whose body was not read has its
 * connection closed after the answer.
 */
public final class AuthFailures {

    /** The reason of a 403: the request names a merchant other than the caller's. */
    public static final String MERCHANT_MISMATCH = "merchant_mismatch";

    private static final System.Logger LOGGER = System.getLogger(AuthFailures.class.getName());
    private static final List<String> KNOWN = List.of(Authentication.MISSING, Authentication.MALFORMED,
                                                      Authentication.UNKNOWN, MERCHANT_MISMATCH);

    private final MeterRegistry meters;
    private final Map<String, PathMatcher> routes = new LinkedHashMap<>();

    private AuthFailures(MeterRegistry meters, Collection<String> routes) {
        this.meters = meters;
        routes.forEach(route -> this.routes.put(route, PathMatchers.create(route)));
        // Registered at 0, so that a rate() over them works before the first failure.
        KNOWN.forEach(this::counter);
    }

    /**
     * Creates the failure handling and registers {@code auth_failures_total} for the known reasons.
     *
     * @param meters the service's registry
     * @param routes the listener's route templates, e.g. {@code /v1/authorizations/{id}}: a log line names the one a
     *               refused request matched, never its path
     * @return the failure handling
     */
    public static AuthFailures create(MeterRegistry meters, Collection<String> routes) {
        return new AuthFailures(meters, routes);
    }

    /**
     * Answers 401: RFC 9457 problem {@code unauthenticated} with {@code WWW-Authenticate} (RFC 9110 section 11.6.1),
     * {@code Cache-Control: no-store}.
     *
     * @param req     the request
     * @param res     the response, not yet sent
     * @param refused the authenticator's refusal
     */
    public void unauthenticated(ServerRequest req, ServerResponse res, Authentication.Refused refused) {
        record(req, refused.reason(), "Authentication failed");
        res.header(HeaderNames.WWW_AUTHENTICATE, refused.challenge());
        ProblemResponses.send(req, res, Problem.of("unauthenticated", "Unauthenticated", 401, switch (refused.reason()) {
        case Authentication.MISSING -> "Send credentials: Authorization: Bearer <API key>.";
        case Authentication.MALFORMED -> "The credentials are malformed: send exactly one Authorization: Bearer <API "
                                         + "key> header.";
        default -> "The credentials are not valid.";
        }));
    }

    /**
     * Answers 403 problem {@code forbidden}: the caller is authenticated but may not act for the merchant a field of
     * the request names.
     *
     * @param req     the request
     * @param res     the response, not yet sent
     * @param caller  the authenticated caller
     * @param reason  the {@code reason} tag, e.g. {@link #MERCHANT_MISMATCH}
     * @param pointer the field, an RFC 6901 JSON pointer such as {@code #/merchantId}
     */
    public void forbidden(ServerRequest req, ServerResponse res, Caller caller, String reason, String pointer) {
        record(req, reason, "Access denied to merchant " + caller.merchantId());
        String detail = "These credentials may not act for the merchant this field names.";
        ProblemResponses.send(req, res, Problem.of("forbidden", "Forbidden", 403, "The credentials do not allow "
                + "acting for the merchant the request names.").withErrors(List.of(Problem.FieldError.body(pointer,
                                                                                                          detail))));
    }

    private void record(ServerRequest req, String reason, String what) {
        counter(reason).increment();
        LOGGER.log(Level.WARNING, "{0} ({1}): {2} {3} from {4}", what, reason, req.prologue().method().text(),
                   route(req), req.remotePeer().host());
    }

    // The route template, never the path itself: a path is the client's text and may hold a card number, a CVC or a
    // credential pasted in the wrong place (docs/card-data.md), and an unknown one is of no use in the log.
    private String route(ServerRequest req) {
        for (Map.Entry<String, PathMatcher> route : routes.entrySet()) {
            if (route.getValue().match(req.prologue().uriPath()).accepted()) {
                return route.getKey();
            }
        }
        return "(a path no route serves)";
    }

    private Counter counter(String reason) {
        return meters.getOrCreate(Counter.builder("auth_failures")
                                          .tags(List.of(Tag.create("reason", reason)))
                                          .description("Business requests refused for their credentials (401) or "
                                                       + "for acting for another merchant (403), by reason"));
    }
}
