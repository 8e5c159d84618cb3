package com.example.payments.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.example.payments.testing.MetricsScrape;

/**
 * What a real scrape of the service exports, as the judge of monitoring expressions: an expression may select a
 * sample name the scrape holds (e.g. {@code http_server_request_duration_seconds_bucket}) or a recording rule, with
 * label matchers and grouping labels the selected series carry or Prometheus adds when it scrapes. Only the
 * expressions are judged: a metric the service adds never makes a problem.
 */
final class ExportedSeries {

    /**
     * Labels that Prometheus adds to every series at scrape time, so absent from {@code /metrics}: the PodMonitor's
     * {@code podTargetLabels} ({@code environment}) and what the Prometheus operator adds to pod targets.
     */
    static final Set<String> TARGET_LABELS = Set.of("environment", "namespace", "pod", "container", "endpoint", "job",
                                                    "instance");

    /**
     * Series Prometheus writes itself for every target, with the target labels only: {@code up} (1 when the last
     * scrape succeeded), which the target-down and target-absent alerts select.
     */
    static final Set<String> PROMETHEUS_SERIES = Set.of("up");

    private final Map<String, List<Map<String, String>>> samples;
    private final Set<String> recordingRules;

    private ExportedSeries(Map<String, List<Map<String, String>>> samples, Set<String> recordingRules) {
        this.samples = samples;
        this.recordingRules = recordingRules;
    }

    /**
     * The judge for one scrape.
     *
     * @param scrape         a scrape of the service's {@code /metrics}
     * @param recordingRules names the PrometheusRule records, selectable like exported series
     * @return the judge
     */
    static ExportedSeries of(MetricsScrape scrape, Set<String> recordingRules) {
        Map<String, List<Map<String, String>>> samples = new TreeMap<>();
        for (MetricsScrape.Sample sample : scrape.samples()) {
            samples.computeIfAbsent(sample.name(), name -> new ArrayList<>()).add(sample.labels());
        }
        return new ExportedSeries(samples, Set.copyOf(recordingRules));
    }

    /**
     * What is wrong with an expression, if anything: a metric the service does not export, a label its series do
     * not carry, an exact label value ({@code phase="total"}) no series has, or a grouping label none of the
     * selected series carries. Values with a Grafana variable and regular-expression matchers are not judged.
     *
     * @param expression PromQL
     * @return problems, each naming the part of the expression; empty when the expression is sound
     */
    List<String> problems(String expression) {
        PromQl.Parsed parsed = PromQl.parse(expression);
        List<String> problems = new ArrayList<>();
        Set<String> selectedLabels = new TreeSet<>(TARGET_LABELS);
        for (PromQl.Selector selector : parsed.selectors()) {
            String metric = selector.metric();
            if (metric == null) {
                problems.add(selector + " names no metric: name it, so that this check can follow it");
            } else if (PROMETHEUS_SERIES.contains(metric)) {
                selector.matchers().stream().filter(m -> !TARGET_LABELS.contains(m.label()))
                        .forEach(m -> problems.add(metric + " has only target labels, not " + m.label()));
            } else if (recordingRules.contains(metric)) {
                selectedLabels.addAll(selector.matchers().stream().map(PromQl.LabelMatcher::label).toList());
            } else if (!samples.containsKey(metric)) {
                problems.add(metric + " is not exported by the service; exported: " + similar(metric));
            } else {
                selectedLabels.addAll(labels(metric));
                selector.matchers().forEach(matcher -> judge(metric, matcher, problems));
            }
        }
        for (String label : parsed.groupingLabels()) {
            if (!selectedLabels.contains(label)) {
                problems.add("grouping label " + label + " is on none of the selected series " + selectedLabels);
            }
        }
        return problems;
    }

    private void judge(String metric, PromQl.LabelMatcher matcher, List<String> problems) {
        String label = matcher.label();
        if (TARGET_LABELS.contains(label)) {
            return;
        }
        Set<String> labels = labels(metric);
        if (!labels.contains(label)) {
            problems.add(metric + " has no label " + label + "; its labels: " + labels);
        } else if (matcher.op().equals("=") && !matcher.value().contains("$")
                   && samples.get(metric).stream().noneMatch(s -> matcher.value().equals(s.get(label)))) {
            problems.add(metric + "{" + matcher + "} matches no exported series; values of " + label + ": "
                         + samples.get(metric).stream().map(s -> s.get(label)).collect(Collectors.toCollection(TreeSet::new)));
        }
    }

    private Set<String> labels(String metric) {
        return samples.get(metric).stream().flatMap(s -> s.keySet().stream()).collect(Collectors.toCollection(TreeSet::new));
    }

    // Exported names sharing the first word, e.g. every idempotency_* name for idempotency_request_total.
    private Set<String> similar(String metric) {
        String prefix = metric.contains("_") ? metric.substring(0, metric.indexOf('_') + 1) : metric;
        Set<String> similar = samples.keySet().stream().filter(name -> name.startsWith(prefix))
                .collect(Collectors.toCollection(TreeSet::new));
        return similar.isEmpty() ? samples.keySet() : similar;
    }
}
