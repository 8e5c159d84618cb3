package com.example.payments.database;

/**
 * The three parts of a lookup key ({@code RequestIdentities.lookupKey}), for the own columns of the rows it keys
 * ({@code idempotency_records}, {@code idempotency_bindings}).
 *
 * @param operation the operation, e.g. {@code authorize}
 * @param merchant  the merchant id
 * @param key       the client's idempotency key
 */
record LookupKey(String operation, String merchant, String key) {

    /**
     * Splits a lookup key: its parts are written as {@code <length>:<value>} and joined with {@code :}, e.g.
     * {@code 9:authorize:5:m_123:8:order-42}.
     *
     * @param lookupKey a key built by {@code RequestIdentities.lookupKey}
     * @return its parts
     * @throws IllegalArgumentException when it was not built so
     */
    static LookupKey parse(String lookupKey) {
        String[] parts = new String[3];
        int at = 0;
        for (int i = 0; i < 3; i++) {
            int colon = lookupKey.indexOf(':', at);
            if (colon < 0) {
                throw new IllegalArgumentException("not a lookup key built by RequestIdentities.lookupKey");
            }
            int length = Integer.parseInt(lookupKey.substring(at, colon));
            parts[i] = lookupKey.substring(colon + 1, colon + 1 + length);
            at = colon + 1 + length + 1;
        }
        return new LookupKey(parts[0], parts[1], parts[2]);
    }
}
