/** Health probes on their own listener: liveness, readiness (dependency checks in parallel) and startup. */
package com.example.payments.health;
