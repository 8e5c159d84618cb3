package com.example.payments;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.example.payments.authentication.AuthFailures;
import com.example.payments.authentication.AuthenticationFilter;
import com.example.payments.authentication.Authenticator;
import com.example.payments.authorization.AuthorizationService;
import com.example.payments.authorization.OperationService;
import com.example.payments.health.DependencyChecks;
import com.example.payments.health.HealthState;
import com.example.payments.health.WorkerWatchdog;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.idempotency.IdempotencySettings;
import com.example.payments.idempotency.IdempotentOperation;
import com.example.payments.idempotency.RequestIdentities;
import com.example.payments.lifecycle.InFlightCountingFilter;
import com.example.payments.observability.BuildInfo;
import com.example.payments.observability.JvmMetrics;

import io.helidon.health.HealthCheck;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.service.registry.Services;

/**
 * Every component the two listeners serve from and the background workers use, built and wired before anything
 * listens: the metrics registry, health flags, the store of {@code idempotency.store} and the idempotency registry over
 * it, the readiness dependency checks, the issuer of {@code authorizer.type}, the authorization API with captures and
 * voids (each an idempotent operation whose work must end before the drain deadline), the authentication filter and
 * the in-flight counter the drain waits on. Building them connects the stores ({@link Backends#create}) but serves
 * nothing: the listeners start afterwards.
 *
 * @param meters         the registry {@code /metrics} serves (Micrometer's global one, which Helidon's all share)
 * @param jvm            the JVM and build-info metrics (closed in the shutdown cleanup phase)
 * @param state          health flags
 * @param watchdog       watches the background workers' heartbeats for liveness
 * @param backends       the store of {@code idempotency.store} and what comes with it
 * @param registry       the idempotency registry
 * @param dependencies   the required readiness dependencies, each bounded by {@code health.readiness.check-timeout}
 * @param issuer         the authorizer and the resources it brings (closed in the shutdown cleanup phase)
 * @param authorizations the authorization API
 * @param operations     captures and voids
 * @param authentication the authentication filter (401 on every business path but {@code /ping})
 * @param inFlight       the business listener's in-flight counter, which the drain waits on
 */
record Components(MeterRegistry meters, JvmMetrics jvm, HealthState state, WorkerWatchdog watchdog,
                  Backends backends, IdempotencyRegistry registry, DependencyChecks dependencies,
                  AuthorizerBackend issuer, AuthorizationService authorizations, OperationService operations,
                  AuthenticationFilter authentication, InFlightCountingFilter inFlight) {

    /**
     * Builds and wires the components, in dependency order.
     *
     * @param settings        validated settings
     * @param readinessChecks extra required readiness dependencies, before the store's own
     * @param authenticator   turns each business request into a caller or a 401
     * @return the components
     * @throws com.example.payments.config.ConfigurationException when the database refuses the credentials or does
     *                                                            not exist (exit 2)
     */
    static Components create(AppSettings settings, List<HealthCheck> readinessChecks, Authenticator authenticator) {
        // Helidon's registries all share Micrometer's global one; use it openly.
        MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();
        JvmMetrics jvm = JvmMetrics.bind(meters, BuildInfo.load());
        HealthState state = new HealthState();
        WorkerWatchdog watchdog = new WorkerWatchdog(meters);

        IdempotencySettings idempotency = settings.idempotency();
        Backends backends = Backends.create(idempotency, settings.backends(), settings.lifecycle(), settings.health().checkTimeout(),
                                            meters);
        IdempotencyRegistry registry = IdempotencyRegistry.create(backends.idempotency(), idempotency.inFlightLease(),
                idempotency.retention(), settings.backends().bounds().record(), idempotency.merchantQuota(), meters);
        List<HealthCheck> checks = new ArrayList<>(readinessChecks);
        checks.addAll(backends.readinessChecks());
        DependencyChecks dependencies = DependencyChecks.create(checks, settings.health().checkTimeout());

        AuthorizerBackend issuer = AuthorizerBackend.create(settings.authorizer(), meters);
        IdempotentOperation authorize = IdempotentOperation.create(AuthorizationService.OPERATION, registry,
                backends.bindings(),
                RequestIdentities.create(idempotency.fingerprintSecret(), idempotency.previousSecret()),
                settings.backends().bounds(), settings.authorizer().timeout(), state::drainDeadline);
        AuthFailures authFailures = AuthFailures.create(meters, Routes.businessResources().keySet());
        AuthorizationService authorizations = AuthorizationService.create(authorize, issuer.authorizer(),
                settings.authorizer(), backends.authorizations(), settings.lifecycle(), Clock.systemUTC(), meters,
                authFailures, backends.outcomes());
        OperationService operations = OperationService.create(
                operation(OperationService.CAPTURE, registry, backends, settings, state),
                operation(OperationService.VOID, registry, backends, settings, state), backends.authorizations(),
                authorizations, settings.lifecycle(), Clock.systemUTC(), meters);
        AuthenticationFilter authentication = AuthenticationFilter.create(authenticator, authFailures,
                                                                          Set.of(Listeners.PING));
        InFlightCountingFilter inFlight = InFlightCountingFilter.create(meters);
        return new Components(meters, jvm, state, watchdog, backends, registry, dependencies, issuer, authorizations,
                              operations, authentication, inFlight);
    }

    // The idempotent-operation flow of a capture or a void: the registry, key bindings and bounds of authorizations.
    private static IdempotentOperation operation(IdempotentOperation.Definition definition,
                                                 IdempotencyRegistry registry, Backends backends,
                                                 AppSettings settings, HealthState state) {
        IdempotencySettings idempotency = settings.idempotency();
        return IdempotentOperation.create(definition, registry, backends.bindings(),
                RequestIdentities.create(idempotency.fingerprintSecret(), idempotency.previousSecret()),
                settings.backends().bounds(), settings.authorizer().timeout(), state::drainDeadline);
    }
}
