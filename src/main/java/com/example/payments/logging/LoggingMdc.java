package com.example.payments.logging;

import io.helidon.logging.common.spi.MdcProvider;
import org.apache.logging.log4j.ThreadContext;

/**
 * Keeps Helidon's MDC ({@code HelidonMdc}: the request id, the trace and span ids) in Log4j's thread context, where
 * every log line written on the same thread reads it ({@code http.request.id}, {@code trace.id}, {@code span.id} in
 * the JSON lines, {@code %X{requestId}} in the text ones). Found by {@code HelidonMdc} through
 * {@code META-INF/services}.
 */
public final class LoggingMdc implements MdcProvider {

    /** Created by the service loader. */
    public LoggingMdc() {
    }

    @Override
    public void put(String key, String value) {
        ThreadContext.put(key, value);
    }

    @Override
    public void remove(String key) {
        ThreadContext.remove(key);
    }

    @Override
    public void clear() {
        ThreadContext.clearMap();
    }

    @Override
    public String get(String key) {
        return ThreadContext.get(key);
    }
}
