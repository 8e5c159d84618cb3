package com.example.payments.http;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.helidon.logging.common.HelidonMdc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

class RequestIdsTest {

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

    @ParameterizedTest
    @ValueSource(strings = {
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
            // A later version may add fields: read what version 00 defines (W3C Trace Context section 4.3).
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"})
    void aValidTraceparentGivesItsTraceId(String traceparent) {
        assertThat(TraceContext.traceId(traceparent), is(Optional.of(TRACE_ID)));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",
            "garbage",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4111111111111111a3ce929d0e0e4736-00f067aa0ba902b7-0g"})
    void anInvalidTraceparentIsIgnored(String traceparent) {
        assertThat(TraceContext.traceId(traceparent), is(Optional.empty()));
    }

    @Test
    void freshIdsAreTraceIdsAndDiffer() {
        String one = RequestIds.fresh();
        assertThat(one.matches("[0-9a-f]{32}"), is(true));
        assertThat(TraceContext.traceId("00-" + one + "-00f067aa0ba902b7-01"), is(Optional.of(one)));
        assertThat(RequestIds.fresh(), is(not(one)));
    }

    /** Work handed to another thread logs with the caller's request id and, when traced, its trace and span ids. */
    @Test
    void workHandedToAnotherThreadCarriesTheCallersIdsAndLeavesThemBehind() throws Exception {
        HelidonMdc.set(RequestIds.MDC_KEY, TRACE_ID);
        HelidonMdc.set(RequestIds.MDC_TRACE_ID, TRACE_ID);
        HelidonMdc.set(RequestIds.MDC_SPAN_ID, "00f067aa0ba902b7");
        Callable<List<Optional<String>>> seen;
        try {
            seen = RequestIds.propagate(() -> List.of(HelidonMdc.get(RequestIds.MDC_KEY),
                                                      HelidonMdc.get(RequestIds.MDC_TRACE_ID),
                                                      HelidonMdc.get(RequestIds.MDC_SPAN_ID)));
        } finally {
            HelidonMdc.remove(RequestIds.MDC_KEY);
            HelidonMdc.remove(RequestIds.MDC_TRACE_ID);
            HelidonMdc.remove(RequestIds.MDC_SPAN_ID);
        }
        try (ExecutorService other = Executors.newSingleThreadExecutor()) {
            assertThat(other.submit(seen).get(), is(List.of(Optional.of(TRACE_ID), Optional.of(TRACE_ID),
                                                            Optional.of("00f067aa0ba902b7"))));
            // The thread is used again for other work: nothing of this request stays on it.
            assertThat(other.submit(() -> List.of(HelidonMdc.get(RequestIds.MDC_KEY),
                                                  HelidonMdc.get(RequestIds.MDC_TRACE_ID),
                                                  HelidonMdc.get(RequestIds.MDC_SPAN_ID))).get(),
                       is(List.of(Optional.empty(), Optional.empty(), Optional.empty())));
        }
    }

    /** Untraced work carries no trace ids; run in place, it leaves the running thread's own ids as they were. */
    @Test
    void untracedWorkCarriesNoTraceIdsAndWorkRunInPlaceKeepsTheThreadsOwnIds() throws Exception {
        HelidonMdc.set(RequestIds.MDC_KEY, TRACE_ID);
        Callable<List<Optional<String>>> seen;
        try {
            seen = RequestIds.propagate(() -> List.of(HelidonMdc.get(RequestIds.MDC_KEY),
                                                      HelidonMdc.get(RequestIds.MDC_TRACE_ID)));
        } finally {
            HelidonMdc.remove(RequestIds.MDC_KEY);
        }
        HelidonMdc.set(RequestIds.MDC_KEY, "its-own-request");
        HelidonMdc.set(RequestIds.MDC_TRACE_ID, "its-own-trace");
        try {
            assertThat(seen.call(), is(List.of(Optional.of(TRACE_ID), Optional.empty())));
            assertThat(HelidonMdc.get(RequestIds.MDC_KEY), is(Optional.of("its-own-request")));
            assertThat(HelidonMdc.get(RequestIds.MDC_TRACE_ID), is(Optional.of("its-own-trace")));
        } finally {
            HelidonMdc.remove(RequestIds.MDC_KEY);
            HelidonMdc.remove(RequestIds.MDC_TRACE_ID);
        }
    }
}
