package com.example.payments.authentication;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;

/**
 * The default {@link Authenticator}: an API key as a bearer token, {@code Authorization: Bearer <key>} (RFC 6750
 * section 2.1), looked up among the configured {@link ApiKeys} by its SHA-256 hash.
 *
 * <p>No {@code Authorization} header: {@code missing}. Two headers, another scheme, or a token with characters outside
 * RFC 6750's {@code b64token}: {@code malformed}. A well-formed key that matches no hash: {@code unknown}. Each
 * refusal carries {@code WWW-Authenticate: Bearer realm="payments-authorization"}, with RFC 6750's
 * {@code error="invalid_request"} or {@code error="invalid_token"} when credentials were sent.
 */
public final class ApiKeyAuthenticator implements Authenticator {

    /** The realm of every challenge. */
    public static final String REALM = "payments-authorization";

    // RFC 6750 section 2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 11.1).
    private static final Pattern BEARER = Pattern.compile("(?i:bearer) +([A-Za-z0-9._~+/-]+=*) *");
    private static final String CHALLENGE = "Bearer realm=\"" + REALM + "\"";

    private final ApiKeys keys;

    private ApiKeyAuthenticator(ApiKeys keys) {
        this.keys = keys;
    }

    /**
     * Creates the authenticator.
     *
     * @param keys the accepted keys ({@code auth.api-keys}, {@code auth.api-keys-file}); none refuses everyone
     * @return the authenticator
     */
    public static ApiKeyAuthenticator create(ApiKeys keys) {
        return new ApiKeyAuthenticator(keys);
    }

    @Override
    public Authentication authenticate(ServerRequest request) {
        List<String> values = request.headers().all(HeaderNames.AUTHORIZATION, List::of);
        if (values.isEmpty()) {
            return new Authentication.Refused(Authentication.MISSING, CHALLENGE);
        }
        Matcher bearer = BEARER.matcher(values.getFirst());
        if (values.size() > 1 || !bearer.matches()) {
            return new Authentication.Refused(Authentication.MALFORMED, CHALLENGE + ", error=\"invalid_request\"");
        }
        Optional<String> merchant = keys.merchantOf(bearer.group(1));
        return merchant.<Authentication>map(id -> new Authentication.Authenticated(new Caller(id)))
                .orElseGet(() -> new Authentication.Refused(Authentication.UNKNOWN,
                                                            CHALLENGE + ", error=\"invalid_token\""));
    }
}
