package com.example.payments.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.yaml.snakeyaml.Yaml;

/**
 * The config files of an environment, read from the repository as its kustomize component mounts them, without
 * kubectl: {@code config/<env>/kustomization.yaml} generates the ConfigMap from its own files, and each component it
 * includes from {@code config/} ({@code config/base} for staging and prod) merges its files into it. The service reads
 * them through {@code APP_CONFIG_FILE} with the included components' files first, so that the environment's own file
 * overrides what it shares: dev {@code config/dev/config.yaml}; staging and prod {@code config/base/base.yaml} then
 * {@code config/<env>/config.yaml}. The components' inline patches (the Kubernetes side of an environment) are read
 * here too.
 */
public final class EnvironmentFiles {

    private EnvironmentFiles() {
    }

    /**
     * The directories that make up an environment's configuration, lowest precedence first.
     *
     * @param environment e.g. {@code prod}
     * @return e.g. {@code config/base}, {@code config/prod} (relative to the project root)
     */
    public static List<Path> directories(String environment) {
        List<Path> directories = new ArrayList<>();
        collect(Path.of("config", environment), directories);
        return List.copyOf(directories);
    }

    /**
     * The files an environment's pods read, lowest precedence first, as {@code APP_CONFIG_FILE} lists them.
     *
     * @param environment e.g. {@code prod}
     * @return e.g. {@code config/base/base.yaml}, {@code config/prod/config.yaml} (relative to the project root)
     */
    public static List<Path> files(String environment) {
        List<Path> files = new ArrayList<>();
        for (Path directory : directories(environment)) {
            for (Object generator : list(kustomization(directory).get("configMapGenerator"))) {
                for (Object file : list(map(generator).get("files"))) {
                    files.add(directory.resolve((String) file));
                }
            }
        }
        return List.copyOf(files);
    }

    /**
     * An {@code APP_CONFIG_FILE} value that runs the service on an environment's files from the project root.
     *
     * @param environment e.g. {@code prod}
     * @return e.g. {@code config/base/base.yaml,config/prod/config.yaml}
     */
    public static String appConfigFile(String environment) {
        return files(environment).stream().map(Path::toString).collect(Collectors.joining(","));
    }

    /**
     * The inline patches ({@code patches[].patch}) of an environment's components, its own component's first, then
     * those it includes: the first one that sets a field is the one that counts.
     *
     * @param environment e.g. {@code prod}
     * @return YAML texts, e.g. a Deployment patch setting {@code terminationGracePeriodSeconds}
     */
    public static List<String> patches(String environment) {
        List<String> patches = new ArrayList<>();
        for (Path directory : directories(environment).reversed()) {
            for (Object entry : list(kustomization(directory).get("patches"))) {
                if (map(entry).get("patch") instanceof String patch) {
                    patches.add(patch);
                }
            }
        }
        return List.copyOf(patches);
    }

    // Included components first (kustomize merges their files into the ConfigMap this directory generates).
    private static void collect(Path directory, List<Path> into) {
        for (Object component : list(kustomization(directory).get("components"))) {
            Path included = directory.resolve((String) component).normalize();
            if (included.startsWith("config") && !into.contains(included)) {
                collect(included, into);
            }
        }
        into.add(directory);
    }

    private static Map<String, Object> kustomization(Path directory) {
        try {
            return map(new Yaml().load(Files.readString(directory.resolve("kustomization.yaml"),
                                                        StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node) {
        if (!(node instanceof Map)) {
            throw new AssertionError("expected a YAML mapping, found " + node);
        }
        return (Map<String, Object>) node;
    }

    private static List<?> list(Object node) {
        return node instanceof List<?> list ? list : List.of();
    }
}
