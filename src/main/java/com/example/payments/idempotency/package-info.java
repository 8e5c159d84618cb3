/** Idempotency-Key registry: claims, replays and leases over an in-memory or Redis store. */
package com.example.payments.idempotency;
