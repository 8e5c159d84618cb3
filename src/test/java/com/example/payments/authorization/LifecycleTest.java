package com.example.payments.authorization;

import java.time.Instant;
import java.util.Map;

import com.example.payments.authorization.Lifecycle.Operation;
import com.example.payments.authorization.Lifecycle.Position;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/** Every state an authorization can be in, times every operation, and the status code each one answers. */
class LifecycleTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    private static final Instant LATER = NOW.plusSeconds(3600);
    private static final int MAX_CAPTURES = 3;

    // An authorization of 1000 EUR cents in each situation.
    private static final Map<String, Position> SITUATIONS = Map.ofEntries(
            Map.entry("approved", at(AuthorizationState.APPROVED, 0, 0, false, 0, LATER)),
            Map.entry("partly-captured", at(AuthorizationState.APPROVED, 600, 0, false, 1, LATER)),
            Map.entry("capture-pending", at(AuthorizationState.APPROVED, 0, 300, false, 1, LATER)),
            Map.entry("void-pending", at(AuthorizationState.APPROVED, 0, 0, true, 0, LATER)),
            Map.entry("max-captures", at(AuthorizationState.APPROVED, 300, 0, false, MAX_CAPTURES, LATER)),
            Map.entry("past-expiry", at(AuthorizationState.APPROVED, 0, 0, false, 0, NOW)),
            Map.entry("captured", at(AuthorizationState.CAPTURED, 1000, 0, false, 1, LATER)),
            Map.entry("voided", at(AuthorizationState.VOIDED, 0, 0, false, 0, LATER)),
            Map.entry("expired", at(AuthorizationState.EXPIRED, 0, 0, false, 0, NOW)),
            Map.entry("reversed", at(AuthorizationState.REVERSED, 0, 0, false, 0, LATER)),
            Map.entry("declined", at(AuthorizationState.DECLINED, 0, 0, false, 0, LATER)));

    private static Position at(AuthorizationState state, long captured, long reserved, boolean voidPending,
                               int captures, Instant expiresAt) {
        return new Position(state, 1000, "EUR", captured, reserved, voidPending, captures, expiresAt);
    }

    private static int status(Lifecycle.Verdict verdict) {
        return switch (verdict) {
        case Lifecycle.Allowed allowed -> 201;
        case Lifecycle.Refused refused -> refused.status();
        };
    }

    @ParameterizedTest(name = "{0}: capture 100 -> {1}, capture 500 -> {2}, capture in USD -> {3}, void -> {4}, "
                              + "expire -> {5}")
    @CsvSource({
            // situation,    capture 100, capture 500, other currency, void, expire
            "approved,        201, 201, 422, 201, 409",
            "partly-captured, 201, 422, 422, 201, 409",
            "capture-pending, 201, 201, 422, 409, 409",
            "void-pending,    409, 409, 409, 409, 409",
            "max-captures,    409, 409, 409, 201, 409",
            "past-expiry,     409, 409, 409, 409, 201",
            "captured,        409, 409, 409, 409, 409",
            "voided,          409, 409, 409, 409, 409",
            "expired,         409, 409, 409, 409, 409",
            "reversed,        409, 409, 409, 409, 409",
            "declined,        409, 409, 409, 409, 409"})
    void eachStateAnswersEachOperationWithItsStatus(String situation, int capture100, int capture500,
                                                    int otherCurrency, int voided, int expired) {
        Position at = SITUATIONS.get(situation);
        assertThat("capture 100", status(Lifecycle.reserve(at, Operation.CAPTURE, 100, "EUR", MAX_CAPTURES, NOW)),
                   is(capture100));
        assertThat("capture 500", status(Lifecycle.reserve(at, Operation.CAPTURE, 500, "EUR", MAX_CAPTURES, NOW)),
                   is(capture500));
        assertThat("capture in USD", status(Lifecycle.reserve(at, Operation.CAPTURE, 100, "USD", MAX_CAPTURES, NOW)),
                   is(otherCurrency));
        assertThat("void", status(Lifecycle.reserve(at, Operation.VOID, 0, "EUR", MAX_CAPTURES, NOW)), is(voided));
        assertThat("expire", status(Lifecycle.reserve(at, Operation.EXPIRE, 0, "EUR", MAX_CAPTURES, NOW)),
                   is(expired));
    }

    @Test
    void aRefusedCaptureNamesTheFieldOrTheState() {
        Lifecycle.Refused tooMuch = (Lifecycle.Refused) Lifecycle.reserve(SITUATIONS.get("partly-captured"),
                Operation.CAPTURE, 500, "EUR", MAX_CAPTURES, NOW);
        assertThat(tooMuch.pointer(), is("#/amount/value"));
        Lifecycle.Refused voided = (Lifecycle.Refused) Lifecycle.reserve(SITUATIONS.get("voided"),
                Operation.CAPTURE, 100, "EUR", MAX_CAPTURES, NOW);
        assertThat(voided.detail(), is("The authorization is VOIDED."));
    }

    @Test
    void aVoidReservesTheWholeRemainder() {
        assertThat(Lifecycle.reserve(SITUATIONS.get("partly-captured"), Operation.VOID, 0, "EUR", MAX_CAPTURES, NOW),
                   is(new Lifecycle.Allowed(400)));
    }

    @Test
    void aSucceededCaptureAppliesItsReservationAndTheLastOneCapturesTheAuthorization() {
        Position pending = at(AuthorizationState.APPROVED, 600, 400, false, 2, LATER);
        Position settled = Lifecycle.settle(pending, Operation.CAPTURE, 400, true);
        assertThat(settled.captured(), is(1000L));
        assertThat(settled.reserved(), is(0L));
        assertThat(settled.state(), is(AuthorizationState.CAPTURED));
    }

    @Test
    void aDeclinedCaptureReturnsItsReservation() {
        Position pending = at(AuthorizationState.APPROVED, 0, 300, false, 1, LATER);
        Position settled = Lifecycle.settle(pending, Operation.CAPTURE, 300, false);
        assertThat(settled.captured(), is(0L));
        assertThat(settled.remainder(), is(1000L));
        assertThat(settled.state(), is(AuthorizationState.APPROVED));
    }

    @Test
    void aVoidEndsTheAuthorizationAndADeclinedOneLeavesItCapturable() {
        Position pending = at(AuthorizationState.APPROVED, 0, 0, true, 0, LATER);
        assertThat(Lifecycle.settle(pending, Operation.VOID, 1000, true).state(), is(AuthorizationState.VOIDED));
        Position declined = Lifecycle.settle(pending, Operation.VOID, 1000, false);
        assertThat(declined.state(), is(AuthorizationState.APPROVED));
        assertThat(declined.voidPending(), is(false));
    }

    @Test
    void anExpiryEndsTheAuthorizationWhateverTheAcquirerAnsweredAndKeepsWhatWasCaptured() {
        Position pending = at(AuthorizationState.APPROVED, 299, 0, true, 1, NOW);
        for (boolean succeeded : new boolean[] {true, false}) {
            Position settled = Lifecycle.settle(pending, Operation.EXPIRE, 701, succeeded);
            assertThat(settled.state(), is(AuthorizationState.EXPIRED));
            assertThat(settled.captured(), is(299L));
            assertThat(settled.voidPending(), is(false));
        }
    }
}
