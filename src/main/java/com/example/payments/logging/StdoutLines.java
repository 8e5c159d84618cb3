package com.example.payments.logging;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.util.function.Supplier;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.Logger;

/**
 * The stream under {@code System.out}: each line written to it becomes one log event of the logger {@code stdout}
 * at INFO, so that whatever a library prints is one more line in the configured format (a JSON line like every
 * other), masked like every other. A line longer than 64 KiB is logged in pieces. The console appender writes to the
 * process's stdout itself, not through {@code System.out}, so nothing loops.
 */
final class StdoutLines extends OutputStream {

    private static final int MAX_LINE = 64 * 1024;

    private final Supplier<Logger> loggers;
    private final Charset charset;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private Logger logger;

    StdoutLines(Supplier<Logger> logger, Charset charset) {
        this.loggers = logger;
        this.charset = charset;
    }

    @Override
    public synchronized void write(int b) {
        if (b == '\n') {
            emit();
        } else {
            line.write(b);
            if (line.size() >= MAX_LINE) {
                emit();
            }
        }
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            write(bytes[i]);
        }
    }

    @Override
    public synchronized void close() {
        if (line.size() > 0) {
            emit();
        }
    }

    private void emit() {
        String text = line.toString(charset);
        line.reset();
        if (text.endsWith("\r")) {
            text = text.substring(0, text.length() - 1);
        }
        if (logger == null) {
            logger = loggers.get();
        }
        logger.log(Level.INFO, text);
    }
}
