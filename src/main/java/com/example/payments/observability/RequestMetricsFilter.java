package com.example.payments.observability;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.example.payments.http.ProblemDirectHandler;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Records {@code http_server_request_duration_seconds{method,route,status}} for every business request. The
 * {@code route} tag is the matched route template ({@code /v1/authorizations/{id}}), never the raw path, so the
 * number of series stays bounded; unmatched requests are tagged {@code unmatched}, and methods outside the HTTP
 * standard ones {@code other}. Answers written before routing (a request that could not be read) are recorded through
 * {@link #unrouted()}, tagged {@code unmatched}, with a duration of 0 s. Buckets: {@link LatencyBuckets}.
 */
public final class RequestMetricsFilter implements Filter {

    // Any client can send any method token: only these become tag values, so the number of series stays bounded.
    private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
                                                            "OPTIONS", "TRACE", "CONNECT");

    private final MeterRegistry meters;
    // Each series' timer, created at its first request and held: a registry lookup builds a meter id (tags, name,
    // description) every time. Bounded like the series: known methods x route templates x status codes.
    private final Map<Series, Timer> timers = new ConcurrentHashMap<>();

    private record Series(String method, String route, int status) {
    }

    private RequestMetricsFilter(MeterRegistry meters) {
        this.meters = meters;
    }

    /**
     * Creates the filter.
     *
     * @param meters registry
     * @return the filter
     */
    public static RequestMetricsFilter create(MeterRegistry meters) {
        return new RequestMetricsFilter(meters);
    }

    /**
     * Records the answers the listener's direct handler writes for requests that never reached routing.
     *
     * @return what the business listener's {@link ProblemDirectHandler} tells of such an answer
     */
    public ProblemDirectHandler.Unrouted unrouted() {
        return (method, status, requestId) -> timers.computeIfAbsent(new Series(method(method), "unmatched", status),
                                                                     this::timer).record(Duration.ZERO);
    }

    private static String method(String method) {
        return KNOWN_METHODS.contains(method) ? method : "other";
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        try {
            chain.proceed();
        } finally {
            timers.computeIfAbsent(new Series(method(req.prologue().method().text()),
                                              req.matchingPattern().orElse("unmatched"), res.status().code()),
                                   this::timer)
                    .record(Duration.ofNanos(System.nanoTime() - start));
        }
    }

    private Timer timer(Series series) {
        return meters.getOrCreate(Timer.builder("http_server_request_duration")
                                          .baseUnit(java.util.concurrent.TimeUnit.SECONDS)
                                          .tags(List.of(Tag.create("method", series.method()),
                                                        Tag.create("route", series.route()),
                                                        Tag.create("status", String.valueOf(series.status()))))
                                          .description("Business request duration")
                                          .percentiles(new double[0])
                                          .buckets(LatencyBuckets.bounds()));
    }
}
