/** Sandbox card issuer that deduplicates on the attempt id: what the http authorizer calls in tests and soaks. */
package com.example.payments.issuer;
