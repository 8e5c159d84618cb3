package com.example.payments.deploy;

import java.util.stream.Stream;

/**
 * The environments of this project: one {@code config/<env>/} and one {@code k8s/overlays/<env>/} each. Sources for
 * parameterized tests.
 */
final class Environments {

    private Environments() {
    }

    /**
     * Every environment.
     *
     * @return dev, staging, prod
     */
    static Stream<String> all() {
        return Stream.of("dev", "staging", "prod");
    }

    /**
     * The environments that carry real traffic or rehearse it: graceful shutdown, Redis, monitoring.
     *
     * @return staging, prod
     */
    static Stream<String> productionLike() {
        return Stream.of("staging", "prod");
    }
}
