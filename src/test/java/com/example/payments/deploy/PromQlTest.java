package com.example.payments.deploy;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The metric-name extraction that the dashboard and alert tests rely on: metric names come out, functions,
 * aggregations, keywords, label names, strings, numbers, durations and Grafana variables do not.
 */
class PromQlTest {

    @Test
    void aBareMetricIsASelectorWithoutMatchers() {
        assertThat(metrics("http_in_flight_requests"), contains("http_in_flight_requests"));
    }

    @Test
    void matchersAreReadWithTheirOperatorsAndUnescapedValues() {
        PromQl.Selector selector = PromQl.parse(
                "health_probe_success{probe=\"readiness\", scope!='vendor',route=~\"/v1/.*\","
                + "status!~\"5..\",x=\"a\\\"b\"}")
                .selectors().getFirst();

        assertThat(selector.metric(), is("health_probe_success"));
        assertThat(selector.matchers(), contains(new PromQl.LabelMatcher("probe", "=", "readiness"),
                                                 new PromQl.LabelMatcher("scope", "!=", "vendor"),
                                                 new PromQl.LabelMatcher("route", "=~", "/v1/.*"),
                                                 new PromQl.LabelMatcher("status", "!~", "5.."),
                                                 new PromQl.LabelMatcher("x", "=", "a\"b")));
    }

    @Test
    void functionsAggregationsAndGroupingLabelsAreNotMetrics() {
        PromQl.Parsed parsed = PromQl.parse("histogram_quantile(0.99, sum by (route, le) "
                                            + "(rate(http_server_request_duration_seconds_bucket{scope=\"application\"}[5m])))");

        assertThat(names(parsed), contains("http_server_request_duration_seconds_bucket"));
        assertThat(parsed.groupingLabels(), is(Set.of("route", "le")));
    }

    @Test
    void aGroupingClauseAfterTheAggregatedExpressionIsReadToo() {
        PromQl.Parsed parsed = PromQl.parse("sum(rate(a_total[5m])) without (pod) / count(b) BY (le)");

        assertThat(names(parsed), contains("a_total", "b"));
        assertThat(parsed.groupingLabels(), is(Set.of("pod", "le")));
    }

    @Test
    void vectorMatchingKeywordsAndTheirLabelListsAreNotMetrics() {
        PromQl.Parsed parsed = PromQl.parse("a / on (pod) group_left (type) b and ignoring(type) c > bool 0 "
                                            + "unless d or e * group_right f");

        assertThat(names(parsed), contains("a", "b", "c", "d", "e", "f"));
        assertThat(parsed.groupingLabels(), is(Set.of("pod", "type")));
    }

    @Test
    void recordingRuleNamesWithColonsAreMetrics() {
        assertThat(metrics("payments_authorization:termination_grace_period_seconds - on (environment) "
                           + "payments_authorization:prestop_sleep_seconds"),
                   contains("payments_authorization:termination_grace_period_seconds",
                            "payments_authorization:prestop_sleep_seconds"));
    }

    @Test
    void stringArgumentsNumbersAndDurationsAreSkipped() {
        assertThat(metrics("label_replace(a, \"dst\", \"$1\", \"src\", \"(.*)\") * 1e-3 + 0x1F - 2.5 + Inf "
                           + "+ NaN + .5 + `raw ( string` + count_values('x', b) + topk(5, c)"),
                   contains("a", "b", "c"));
    }

    @Test
    void rangesSubqueriesOffsetsAndAtModifiersAreSkipped() {
        assertThat(metrics("max_over_time(rate(a[5m])[1h:1m]) + b offset -1h30m + c @ start() + d @ 1609746000"),
                   contains("a", "b", "c", "d"));
    }

    @Test
    void grafanaVariablesAreNeitherMetricsNorErrors() {
        PromQl.Parsed parsed = PromQl.parse("sum(increase(a_total{pod=~\"$pod\",environment=~\"${environment}\"}"
                                            + "[$__rate_interval])) / $__interval_ms * ${__range_s:raw}");

        assertThat(names(parsed), contains("a_total"));
        assertThat(parsed.selectors().getFirst().matchers().getFirst().value(), is("$pod"));
    }

    @Test
    void commentsAreSkipped() {
        assertThat(metrics("a # and not_a_metric{x=\"y\"}\n + b"), contains("a", "b"));
    }

    @Test
    void aNameMatcherNamesTheMetric() {
        PromQl.Parsed parsed = PromQl.parse("{__name__=\"health_probe_success\", probe=\"liveness\"}"
                                            + " + {__name__=~\"http_.*\"}");

        assertThat(names(parsed), contains("health_probe_success", null));
        assertThat(parsed.selectors().get(1).matchers().getFirst().label(), is("__name__"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"sum(a", "sum(a))", "a{b=\"c\"", "a{b=\"c}", "a{b}", "a[5m", "a ; b", "sum by (le a"})
    void malformedExpressionsAreRefusedNamingThePosition(String expression) {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                                                        () -> PromQl.parse(expression));

        assertThat(refused.getMessage(), containsString("at position"));
    }

    private static List<String> metrics(String expression) {
        return names(PromQl.parse(expression));
    }

    private static List<String> names(PromQl.Parsed parsed) {
        return parsed.selectors().stream().map(PromQl.Selector::metric).toList();
    }
}
