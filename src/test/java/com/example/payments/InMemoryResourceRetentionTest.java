package com.example.payments;

import java.util.Map;

/** The resource-retention suite on the embedded defaults: in-memory registry and resource store. */
class InMemoryResourceRetentionTest extends ResourceRetentionContract {

    @Override
    Map<String, String> backend() {
        return Map.of();
    }
}
