package com.example.payments.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import io.helidon.logging.common.HelidonMdc;

/**
 * Captures every java.util.logging record of this JVM, formatted with message parameters and stack traces, so tests
 * can assert what never reaches a log (card numbers, CVCs).
 */
public final class LogCapture extends Handler implements AutoCloseable {

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final SimpleFormatter formatter = new SimpleFormatter();
    private final boolean requestIds;

    private LogCapture(boolean requestIds) {
        this.requestIds = requestIds;
        setLevel(Level.ALL);
    }

    /**
     * Starts capturing on the root logger.
     *
     * @return the capture; close it to stop
     */
    public static LogCapture start() {
        return start(false);
    }

    /**
     * Starts capturing on the root logger, each record as {@code [<request id>]: <message>} with the request id the
     * logging thread's MDC holds when the record is published (what {@code %X{requestId}} formats), empty outside a
     * request.
     *
     * @return the capture; close it to stop
     */
    public static LogCapture withRequestIds() {
        return start(true);
    }

    private static LogCapture start(boolean requestIds) {
        LogCapture capture = new LogCapture(requestIds);
        Logger root = Logger.getLogger("");
        root.addHandler(capture);
        return capture;
    }

    @Override
    public void publish(LogRecord record) {
        lines.add(requestIds
                  ? "[" + HelidonMdc.get("requestId").orElse("") + "]: " + formatter.formatMessage(record) + "\n"
                  : formatter.format(record));
    }

    /**
     * Everything captured, one string.
     *
     * @return text
     */
    public String text() {
        return String.join("", lines);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        Logger.getLogger("").removeHandler(this);
    }
}
