package com.example.payments.http;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * Sends a response body, or only its headers when the request is a {@code HEAD}.
 *
 * <p>RFC 9110 section 9.3.2: a {@code HEAD} gets the status and headers a {@code GET} would get, without the body;
 * section 8.6: its {@code Content-Length}, when sent, is the length of that body. Helidon 4.5 neither routes
 * {@code HEAD} to {@code GET} routes nor drops the body of a {@code HEAD} answer, so every route that answers
 * {@code HEAD} sends through here.
 */
public final class ResponseBodies {

    private ResponseBodies() {
    }

    /**
     * Sends the body, or for a {@code HEAD} request its length only.
     *
     * @param req  the request
     * @param res  response with status and headers set, not yet sent
     * @param body the body a {@code GET} gets
     */
    public static void send(ServerRequest req, ServerResponse res, byte[] body) {
        if (isHead(req)) {
            // Helidon keeps a Content-Length that is already set and writes the header section only.
            res.header(HeaderNames.CONTENT_LENGTH, String.valueOf(body.length)).send();
            return;
        }
        res.send(body);
    }

    /**
     * Whether the request is a {@code HEAD}.
     *
     * @param req the request
     * @return {@code true} for {@code HEAD}
     */
    public static boolean isHead(ServerRequest req) {
        return Method.HEAD.equals(req.prologue().method());
    }
}
