package com.example.payments.deploy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The arithmetic of {@link GraceArithmetic} on its own, without rendering anything.
 */
class GraceArithmeticTest {

    @Test
    void prodNumbersSatisfyBothInequalities() {
        GraceArithmetic prod = prod(45, 15, 35);

        assertThat(prod.violations(), empty());
        assertEquals("preStop 5 + pre-drain 5 + drain 15 + cleanup 3 + linger 6 + margin 5 = 39 < 45; "
                     + "preStop 5 + hard-deadline 35 = 40 < 45", prod.summary());
    }

    @Test
    void aDrainTimeoutThatOutgrowsTheGracePeriodFailsWithItsArithmetic() {
        AssertionError failure = assertThrows(AssertionError.class, prod(45, 40, 35)::check);

        assertThat(failure.getMessage(), containsString("Grace arithmetic of prod is broken: "
                + "terminationGracePeriodSeconds 45 must exceed preStop 5 + pre-drain 5 + drain 40 + cleanup 3 + "
                + "linger 6 + margin 5 = 64"));
    }

    @Test
    void aHardDeadlineThatOutlivesTheGracePeriodFailsWithItsArithmetic() {
        assertThat(prod(45, 15, 41).violations(),
                   contains("preStop 5 + hard-deadline 41 = 46 must be less than terminationGracePeriodSeconds 45"));
    }

    @Test
    void reachingTheGracePeriodExactlyIsNotEnough() {
        assertThat(prod(39, 15, 33).violations(), contains("terminationGracePeriodSeconds 39 must exceed preStop 5 + "
                + "pre-drain 5 + drain 15 + cleanup 3 + linger 6 + margin 5 = 39"));
        assertThat(prod(40, 15, 35).violations(), contains("preStop 5 + hard-deadline 35 = 40 must be less than "
                + "terminationGracePeriodSeconds 40"));
    }

    @Test
    void fractionalSecondsAreShownAsDecimals() {
        GraceArithmetic grace = new GraceArithmetic("dev", 40, 5, Duration.ofMillis(500), Duration.ofSeconds(10),
                                                    Duration.ofSeconds(3), Duration.ZERO, Duration.ofSeconds(30));

        assertThat(grace.summary(), containsString("pre-drain 0.5 + drain 10 + cleanup 3 + linger 0 + margin 5 = 23.5"));
    }

    private static GraceArithmetic prod(long grace, long drain, long hardDeadline) {
        return new GraceArithmetic("prod", grace, 5, Duration.ofSeconds(5), Duration.ofSeconds(drain),
                                   Duration.ofSeconds(3), Duration.ofSeconds(6), Duration.ofSeconds(hardDeadline));
    }
}
