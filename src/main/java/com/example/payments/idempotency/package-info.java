/** Idempotency-Key registry: claims, replays and leases over a store (in-memory here; Redis and PostgreSQL apart). */
package com.example.payments.idempotency;
