package com.example.payments.authorization;

import java.time.Clock;

import com.example.payments.authentication.AuthFailures;
import com.example.payments.idempotency.IdempotentOperation;

import io.helidon.metrics.api.MeterRegistry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.Mockito.mock;

/** A forker wiring the service gets the missing argument named at startup, not a null deep in a request. */
class AuthorizationServiceCreateTest {

    private final IdempotentOperation operation = mock(IdempotentOperation.class);
    private final Authorizer authorizer = mock(Authorizer.class);
    private final AuthorizerSettings settings = mock(AuthorizerSettings.class);
    private final AuthorizationStore store = InMemoryAuthorizationStore.create(1);
    private final AuthorizationSettings lifecycle = new AuthorizationSettings(AuthorizationSettings.DEFAULT_VALIDITY, 1, 50);
    private final Clock clock = Clock.systemUTC();
    private final MeterRegistry meters = mock(MeterRegistry.class);
    private final AuthFailures failures = mock(AuthFailures.class);

    @Test
    void everyArgumentIsRequiredAndNamed() {
        assertNamed("operation", () -> AuthorizationService.create(null, authorizer, settings, store, lifecycle, clock,
                                                                   meters, failures));
        assertNamed("authorizer", () -> AuthorizationService.create(operation, null, settings, store, lifecycle, clock,
                                                                    meters, failures));
        assertNamed("settings", () -> AuthorizationService.create(operation, authorizer, null, store, lifecycle, clock,
                                                                  meters, failures));
        assertNamed("store", () -> AuthorizationService.create(operation, authorizer, settings, null, lifecycle, clock,
                                                               meters, failures));
        assertNamed("lifecycle", () -> AuthorizationService.create(operation, authorizer, settings, store, null, clock,
                                                                   meters, failures));
        assertNamed("clock", () -> AuthorizationService.create(operation, authorizer, settings, store, lifecycle, null,
                                                               meters, failures));
        assertNamed("meters", () -> AuthorizationService.create(operation, authorizer, settings, store, lifecycle,
                                                                clock, null, failures));
        assertNamed("failures", () -> AuthorizationService.create(operation, authorizer, settings, store, lifecycle,
                                                                  clock, meters, null));
    }

    private static void assertNamed(String parameter, org.junit.jupiter.api.function.Executable call) {
        assertEquals(parameter, assertThrows(NullPointerException.class, call).getMessage());
    }
}
