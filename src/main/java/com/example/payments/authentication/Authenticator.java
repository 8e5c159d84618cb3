package com.example.payments.authentication;

import io.helidon.webserver.http.ServerRequest;

/**
 * The authentication seam: turns a business request into a caller identity or a refusal. Installed by
 * {@link AuthenticationFilter} in front of every business route except the public ones ({@code /ping}).
 *
 * <p>The default is {@link ApiKeyAuthenticator} ({@code Authorization: Bearer <key>}, keys configured as SHA-256
 * hashes). A fork whose gateway or mesh already authenticates callers implements this interface instead: read the
 * client certificate of an mTLS connection ({@code req.remotePeer().tlsCertificates()}), verify a JWT, or trust a
 * header that only its proxy can set; then wires it in {@code Main}. Nothing behind the filter changes
 * (docs/security.md).
 *
 * <p>Rules for an implementation: decide from the request's head only (the body is unread, and a refusal must not
 * wait for it); never log or echo the credentials; answer in bounded time (no unbounded remote call per request); a
 * refusal's reason is a short fixed token, since it becomes a metric tag.
 */
@FunctionalInterface
public interface Authenticator {

    /**
     * Authenticates one request.
     *
     * @param request the request, its body not yet read
     * @return {@link Authentication.Authenticated} with the caller, or {@link Authentication.Refused} (401)
     */
    Authentication authenticate(ServerRequest request);
}
