package com.example.payments.idempotency;

import java.util.Arrays;

/**
 * A recorded decision: the resource an idempotent operation created (for an authorization, the JSON of the 201 body,
 * {@code id} and {@code createdAt} included), kept as the exact bytes every answer for it is built from. The 201, each
 * replay and {@code GET} send these bytes, so all of them are byte-identical. Holds no PAN and no CVC.
 *
 * @param key  where it is recorded
 * @param body the resource, as sent
 */
public record Decision(DecisionKey key, byte[] body) {

    @Override
    public boolean equals(Object o) {
        return o instanceof Decision other && key.equals(other.key) && Arrays.equals(body, other.body);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "Decision[" + key.kind() + ":" + key.id() + ", " + body.length + " bytes]";
    }
}
