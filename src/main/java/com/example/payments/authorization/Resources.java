package com.example.payments.authorization;

import java.util.UUID;

import com.example.payments.http.ResponseBodies;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/** Reading resources back: which path ids can be resource ids, and the 200 of a {@code GET} or {@code HEAD}. */
final class Resources {

    private Resources() {
    }

    /**
     * Whether a path id can be a resource id: a UUID in its canonical lower-case form (anything else is 404 without
     * a store lookup).
     *
     * @param id the id from the path
     * @return {@code true} for a canonical UUID
     */
    static boolean isId(String id) {
        try {
            return UUID.fromString(id).toString().equals(id);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Sends 200 with a JSON body, {@code Cache-Control: no-store} (the state changes); a {@code HEAD} gets the
     * headers only.
     *
     * @param req  the request
     * @param res  the response
     * @param body the JSON
     */
    static void send(ServerRequest req, ServerResponse res, byte[] body) {
        res.header(HeaderValues.CONTENT_TYPE_JSON).header(HeaderNames.CACHE_CONTROL, "no-store");
        ResponseBodies.send(req, res, body);
    }
}
