package com.example.payments;

import java.lang.reflect.Proxy;
import java.util.Optional;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.DistributionSummary;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Meter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Timer;

/**
 * A {@link MeterRegistry} that registers nothing, for the warm-up's sandbox ({@link WarmUp}): every meter it hands
 * out counts nothing and is seen nowhere. Helidon offers no public one, and a second registry of Helidon's own would
 * share Micrometer's global registry with the service's real meters (a warm-up request would be counted as a real
 * one).
 */
final class SandboxMeters {

    private SandboxMeters() {
    }

    /**
     * The registry.
     *
     * @return a registry whose meters are no-ops, whose lookups find nothing and whose listings are empty
     */
    static MeterRegistry create() {
        return noOp(MeterRegistry.class);
    }

    private static <T> T noOp(Class<T> type) {
        return type.cast(Proxy.newProxyInstance(SandboxMeters.class.getClassLoader(), new Class<?>[] {type},
                                                (proxy, method, args) -> {
            if (method.getName().equals("getOrCreate") && args != null && args.length == 1) {
                return meterOf((Meter.Builder<?, ?>) args[0]);
            }
            return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            case "toString" -> "no-op " + type.getSimpleName();
            default -> defaultOf(method.getReturnType());
            };
        }));
    }

    private static Meter meterOf(Meter.Builder<?, ?> builder) {
        if (builder instanceof Counter.Builder) {
            return noOp(Counter.class);
        }
        if (builder instanceof Timer.Builder) {
            return noOp(Timer.class);
        }
        if (builder instanceof DistributionSummary.Builder) {
            return noOp(DistributionSummary.class);
        }
        if (builder instanceof Gauge.Builder<?>) {
            return noOp(Gauge.class);
        }
        return noOp(Meter.class);
    }

    private static Object defaultOf(Class<?> type) {
        if (type == boolean.class) {
            return false;
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == int.class) {
            return 0;
        }
        if (type == double.class) {
            return 0.0;
        }
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == java.util.List.class || type == Iterable.class || type == java.util.Collection.class) {
            return java.util.List.of();
        }
        if (type == java.util.stream.Stream.class) {
            return java.util.stream.Stream.empty();
        }
        return null;
    }
}
