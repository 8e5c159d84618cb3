package com.example.payments.testing;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed Prometheus text scrape of {@code /metrics}: sample name, labels, value.
 */
public final class MetricsScrape {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /**
     * One sample line.
     *
     * @param name   sample name, e.g. {@code authorizer_invocations_total}
     * @param labels labels in order
     * @param value  value
     */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private MetricsScrape(List<Sample> samples) {
        this.samples = samples;
    }

    /**
     * Scrapes a health listener.
     *
     * @param healthPort port of the health listener
     * @return the parsed scrape
     * @throws IOException          on connection failure
     * @throws InterruptedException when interrupted
     */
    public static MetricsScrape of(int healthPort) throws IOException, InterruptedException {
        return parse(Http.get("http://127.0.0.1:" + healthPort + "/metrics").body());
    }

    /**
     * Parses Prometheus text.
     *
     * @param text exposition text
     * @return the scrape
     */
    public static MetricsScrape parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher matcher = SAMPLE.matcher(line.trim());
            if (!matcher.matches()) {
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (matcher.group(3) != null) {
                Matcher label = LABEL.matcher(matcher.group(3));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            samples.add(new Sample(matcher.group(1), labels, Double.parseDouble(matcher.group(4))));
        }
        return new MetricsScrape(samples);
    }

    /**
     * Sum of all samples with this name whose labels include the given ones.
     *
     * @param name   sample name
     * @param labels required labels (others ignored)
     * @return the sum, 0 when none match
     */
    public double sum(String name, Map<String, String> labels) {
        return samples.stream()
                .filter(s -> s.name().equals(name))
                .filter(s -> s.labels().entrySet().containsAll(labels.entrySet()))
                .mapToDouble(Sample::value)
                .sum();
    }

    /**
     * Sum of all samples with this name.
     *
     * @param name sample name
     * @return the sum
     */
    public double sum(String name) {
        return sum(name, Map.of());
    }

    /**
     * All samples.
     *
     * @return samples
     */
    public List<Sample> samples() {
        return List.copyOf(samples);
    }
}
