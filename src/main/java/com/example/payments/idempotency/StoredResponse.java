package com.example.payments.idempotency;

import java.util.Arrays;

/**
 * The response kept for a completed idempotency key and replayed byte for byte.
 *
 * @param status      HTTP status, e.g. 201
 * @param location    {@code Location} header value, or {@code null}
 * @param contentType {@code Content-Type} header value
 * @param body        the exact body bytes sent the first time (no PAN, no CVC)
 */
public record StoredResponse(int status, String location, String contentType, byte[] body) {

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse other && status == other.status
               && java.util.Objects.equals(location, other.location)
               && java.util.Objects.equals(contentType, other.contentType)
               && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * java.util.Objects.hash(status, location, contentType) + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", location=" + location + ", " + body.length + " bytes]";
    }
}
