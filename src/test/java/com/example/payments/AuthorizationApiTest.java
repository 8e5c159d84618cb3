package com.example.payments;

import java.util.Map;

/** The authorization API suite on the default backend, {@code idempotency.store: in-memory}. */
class AuthorizationApiTest extends AuthorizationApiContract {

    @Override
    Map<String, String> backend() {
        return Map.of();
    }
}
