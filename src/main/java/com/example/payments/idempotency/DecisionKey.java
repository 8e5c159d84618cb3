package com.example.payments.idempotency;

/**
 * Where a recorded decision lives: the kind of resource an operation creates and its id, e.g.
 * {@code ("authorization", "3f1c…")}. The id is derived from the attempt id ({@link RequestIdentities}), so every
 * execution of one attempt writes to the same key and the first write wins.
 *
 * @param kind resource kind, e.g. {@code authorization}; letters, digits and {@code -} only
 * @param id   resource id, a UUID (version 8: 122 bits of a keyed hash)
 */
public record DecisionKey(String kind, String id) {
}
