package com.example.payments.testing;

import java.io.IOException;
import java.net.http.HttpResponse;

/**
 * Reads the Prometheus text of a running service's {@code /metrics} (health listener).
 */
public final class Metrics {

    private Metrics() {
    }

    /**
     * Sums every series of one metric, whatever its tags, e.g. {@code authorizer_invocations_total} over all outcomes.
     *
     * @param healthPort the service's health listener port
     * @param name       full metric name as exported, e.g. {@code authorizer_invocations_total}
     * @param tagFilter  text every counted series must contain, e.g. {@code outcome="unavailable"}; empty for all
     * @return the sum, 0 when the metric is absent
     * @throws IOException          when the scrape fails
     * @throws InterruptedException when interrupted
     */
    public static double sum(int healthPort, String name, String tagFilter) throws IOException, InterruptedException {
        HttpResponse<String> scrape = Http.get("http://127.0.0.1:" + healthPort + "/metrics");
        if (scrape.statusCode() != 200) {
            throw new IOException("GET /metrics answered " + scrape.statusCode());
        }
        double sum = 0;
        for (String line : scrape.body().split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(tagFilter)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /**
     * Sums every series of one metric.
     *
     * @param healthPort the service's health listener port
     * @param name       full metric name
     * @return the sum
     * @throws IOException          when the scrape fails
     * @throws InterruptedException when interrupted
     */
    public static double sum(int healthPort, String name) throws IOException, InterruptedException {
        return sum(healthPort, name, "");
    }
}
