/**
 * Sandbox card issuer that deduplicates on the attempt id: the test-card rules and ledger the {@code rule-based}
 * authorizer runs in process (development) and the warm-up's rules. Its HTTP server, the issuer simulator that the
 * {@code http} authorizer calls in tests and soaks, is test code (src/test), shipped in the test-tools jar only.
 */
package com.example.payments.issuer;
