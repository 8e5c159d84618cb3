package com.example.payments;

import java.time.Duration;

import com.example.payments.config.ConfigValues;

/**
 * {@code warm-up.*}: the synthetic requests the service sends itself before startup completes ({@link WarmUp}).
 *
 * @param requests {@code warm-up.requests}, default 500, 0 to 100000; 0 turns the warm-up off
 * @param timeout  {@code warm-up.timeout}, default PT3S, a duration > 0: the warm-up stops when it has run this long,
 *                 however many requests it sent, and startup goes on
 */
record WarmUpSettings(int requests, Duration timeout) {

    static final int MAX_REQUESTS = 100_000;

    static WarmUpSettings create(ConfigValues values) {
        return new WarmUpSettings((int) values.longInRange("warm-up.requests", 500, 0, MAX_REQUESTS),
                                  values.positiveDuration("warm-up.timeout", Duration.ofSeconds(3)));
    }
}
