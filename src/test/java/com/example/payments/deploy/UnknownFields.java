package com.example.payments.deploy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * Finds fields that Kubernetes does not know in rendered objects, by their path, e.g.
 * {@code Deployment/payments-authorization: spec.template.spec.terminationGracePeriodSecond}.
 *
 * <p>The API server drops or rejects an unknown field depending on its field-validation setting, and kustomize passes
 * it through silently: a misspelled {@code terminationGracePeriodSecond} would leave the default of 30 s in force
 * while the YAML looks right. Typed (built-in) objects keep such fields in {@code getAdditionalProperties()}, which
 * this walks recursively; CRD objects are checked against {@link CrdSchemas}.
 */
final class UnknownFields {

    private UnknownFields() {
    }

    /**
     * Every unknown field of every object, as {@code Kind/name: path}.
     *
     * @param objects rendered objects
     * @return unknown fields; empty when all are known
     */
    static List<String> in(Collection<? extends HasMetadata> objects) {
        List<String> found = new ArrayList<>();
        for (HasMetadata object : objects) {
            String prefix = object.getKind() + "/" + object.getMetadata().getName() + ": ";
            List<String> paths = new ArrayList<>();
            if (object instanceof GenericKubernetesResource custom) {
                walk(custom.getMetadata(), "metadata", paths);
                paths.addAll(CrdSchemas.unknownFields(custom.getKind(), custom.getAdditionalProperties()));
            } else {
                walk(object, "", paths);
            }
            paths.forEach(path -> found.add(prefix + path));
        }
        return found;
    }

    private static void walk(Object node, String path, List<String> found) {
        switch (node) {
        case null -> { }
        case List<?> list -> {
            for (int i = 0; i < list.size(); i++) {
                walk(list.get(i), path + "[" + i + "]", found);
            }
        }
        case Map<?, ?> map -> map.forEach((key, value) -> walk(value, join(path, String.valueOf(key)), found));
        default -> {
            if (isModel(node)) {
                walkModel(node, path, found);
            }
        }
        }
    }

    private static void walkModel(Object model, String path, List<String> found) {
        for (Method getter : model.getClass().getMethods()) {
            String property = property(getter);
            if (property == null) {
                continue;
            }
            Object value = invoke(getter, model);
            if ("additionalProperties".equals(property)) {
                if (value instanceof Map<?, ?> extra) {
                    extra.keySet().forEach(key -> found.add(join(path, String.valueOf(key))));
                }
            } else {
                walk(value, join(path, property), found);
            }
        }
    }

    /** The JSON property of a bean getter of a model class, or {@code null} when the method is not one. */
    private static String property(Method method) {
        if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
            || method.getDeclaringClass() == Object.class || method.isDefault()) {
            return null;
        }
        String name = method.getName();
        if (name.startsWith("get") && name.length() > 3) {
            return Character.toLowerCase(name.charAt(3)) + name.substring(4);
        }
        return null;
    }

    private static boolean isModel(Object node) {
        return node.getClass().getPackageName().startsWith("io.fabric8.kubernetes.api.model");
    }

    private static Object invoke(Method getter, Object target) {
        try {
            return getter.invoke(target);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new AssertionError("Cannot read " + getter, e);
        }
    }

    private static String join(String path, String property) {
        return path.isEmpty() ? property : path + "." + property;
    }
}
