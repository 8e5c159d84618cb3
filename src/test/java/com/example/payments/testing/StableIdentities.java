package com.example.payments.testing;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a deployed service's stored data depends on, read from any build (this one, or a renamed copy loaded by its own
 * class loader): {@code RenameIT} proves a rename leaves it unchanged.
 */
public final class StableIdentities {

    private StableIdentities() {
    }

    /**
     * The attempt id and resource id of one fixed request (authorize, merchant {@code m_123}, idempotency key
     * {@code order-42}) under a fingerprint secret, and the default Redis key prefix (the code's fallback and
     * {@code application.yaml}'s value), as the build whose classes the loader holds derives them.
     *
     * @param loader loads the build's classes and {@code application.yaml}
     * @param pkg    the build's root package, e.g. {@code com.example.payments}
     * @param secret the fingerprint secret
     * @return attempt id, resource id, the code's default key prefix, {@code application.yaml}'s key prefix
     * @throws ReflectiveOperationException when the build lacks a class or method used here
     * @throws IOException                  when {@code application.yaml} cannot be read
     */
    public static List<String> of(ClassLoader loader, String pkg, String secret)
            throws ReflectiveOperationException, IOException {
        Class<?> identities = Class.forName(pkg + ".idempotency.RequestIdentities", true, loader);
        Class<?> keyType = Class.forName(pkg + ".idempotency.IdempotencyKey", true, loader);
        Object calculator = identities.getMethod("create", String.class, Optional.class)
                .invoke(null, secret, Optional.empty());
        List<?> all = (List<?>) identities
                .getMethod("of", String.class, String.class, String.class, keyType, String.class)
                .invoke(calculator, "authorize", "authorization", "m_123",
                        keyType.getConstructor(String.class).newInstance("order-42"), "canonical form");
        Object identity = all.getFirst();
        Object decision = identity.getClass().getMethod("decision").invoke(identity);
        Object prefix = Class.forName(pkg + ".idempotency.StableNames", true, loader)
                .getField("DEFAULT_KEY_PREFIX").get(null);
        Map<?, ?> yaml;
        try (var in = loader.getResourceAsStream("application.yaml")) {
            yaml = new org.yaml.snakeyaml.Yaml().load(in);
        }
        Object yamlPrefix = ((Map<?, ?>) ((Map<?, ?>) yaml.get("idempotency")).get("redis")).get("key-prefix");
        return List.of((String) identity.getClass().getMethod("attemptId").invoke(identity),
                       (String) decision.getClass().getMethod("id").invoke(decision), (String) prefix,
                       (String) yamlPrefix);
    }
}
