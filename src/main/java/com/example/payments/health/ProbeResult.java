package com.example.payments.health;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One probe answer: the HTTP status, the JSON body and what it does to the circuit-breaker counter.
 *
 * @param status  HTTP status, 200 or 503
 * @param body    JSON body
 * @param breaker effect on the consecutive-readiness-failure counter
 */
public record ProbeResult(int status, Body body, BreakerEffect breaker) {

    /**
     * What a readiness answer does to the circuit breaker. Only genuine failures count: booting and draining are not
     * faults, and counting them would nudge every deploy toward a restart.
     */
    public enum BreakerEffect {
        /** Leaves the counter alone (liveness, startup, draining, starting). */
        NONE,
        /** Adds one consecutive failure. */
        FAILURE,
        /** Resets the counter to 0. */
        RESET
    }

    /**
     * Probe body, serialized as {@code {"status":"...","draining":true,"errors":[...]}} with absent fields omitted.
     *
     * @param status   {@code ok}, {@code draining}, {@code starting}, {@code started}, {@code unhealthy} or
     *                 {@code faulted}
     * @param draining {@code true} only in the draining readiness answer, else omitted
     * @param errors   what failed, omitted when nothing did
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Body(String status, Boolean draining, List<String> errors) {
    }

    static ProbeResult ok(String status) {
        return new ProbeResult(200, new Body(status, null, null), BreakerEffect.NONE);
    }

    static ProbeResult unavailable(String status) {
        return new ProbeResult(503, new Body(status, null, null), BreakerEffect.NONE);
    }

    ProbeResult withBreaker(BreakerEffect effect) {
        return new ProbeResult(status, body, effect);
    }

    /**
     * Whether the probe passed.
     *
     * @return {@code true} for status 200
     */
    public boolean passed() {
        return status == 200;
    }
}
