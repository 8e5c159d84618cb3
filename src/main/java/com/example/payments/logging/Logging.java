package com.example.payments.logging;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import com.example.payments.carddata.LogMasking;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;

/**
 * The service's logging, on Log4j 2 ({@code log4j2.xml}): {@link #bootstrap()} before the first logger,
 * {@link #configure} once the configuration is read, {@link #stop()} last in the shutdown sequence.
 *
 * <p>Call {@link #bootstrap()} and {@link #redirectConsole()} first.
 *
 * <p>The layout and the {@code service.*} fields come from system properties that {@code log4j2.xml} reads when it is
 * loaded: {@value #FORMAT} ({@code text} or {@code json}), {@value #ENVIRONMENT} and {@value #VERSION}.
 */
public final class Logging {

    /** The system property {@code log4j2.xml} picks its layout by: {@code json} or {@code text}. */
    public static final String FORMAT = "payments.logging.format";
    /** The system property of the {@code service.environment} field. */
    public static final String ENVIRONMENT = "payments.service.environment";
    /** The system property of the {@code service.version} field. */
    public static final String VERSION = "payments.service.version";
    /** The JUL log manager that hands every java.util.logging record to Log4j. */
    public static final String JUL_MANAGER = "org.apache.logging.log4j.jul.LogManager";

    private static final long STOP_BOUND_MS = 2_000;
    // The context stop() stopped: Log4j forgets a stopped context, but the loggers made before still point at it.
    private static volatile LoggerContext stopped;

    private Logging() {
    }

    /**
     * Sets up what must be in place before any logger exists, from the first statement of a {@code main} (or the static
     * initializer of its class, before its own logger): java.util.logging handed to Log4j ({@code
     * java.util.logging.manager}, unless the command line set it), the first guess of the format and the environment
     * ({@code logging.format} and {@code app.environment} as system properties or environment variables, {@code text}
     * and {@code dev} otherwise; {@link #configure} corrects them) and the version. Only system properties that are
     * not set already: a test JVM that loads the class keeps its own. Calling it again changes nothing.
     */
    public static synchronized void bootstrap() {
        setIfAbsent("java.util.logging.manager", JUL_MANAGER);
        setIfAbsent(FORMAT, lowerCase(setting("logging.format", "LOGGING_FORMAT", "text")));
        setIfAbsent(ENVIRONMENT, lowerCase(setting("app.environment", "APP_ENVIRONMENT", "dev")));
        String version = Logging.class.getPackage().getImplementationVersion();
        setIfAbsent(VERSION, version == null ? "unknown" : version);
    }

    /**
     * Makes {@code System.out} the {@code stdout} logger (each line a log event at INFO, in the configured format and
     * masked like every other) and masks card numbers on {@code System.err}, which keeps what must not wait for the
     * logger: a configuration error before exit 2, an uncaught exception, the JVM's own messages. Call it first in
     * {@code main}. Calling it again changes nothing.
     */
    public static synchronized void redirectConsole() {
        LogMasking.maskConsole();
        if (!(System.out instanceof StdoutStream)) {
            System.setOut(new StdoutStream(System.out));
        }
    }

    /**
     * Applies the format and the environment the configuration names; Log4j reloads {@code log4j2.xml} only when they
     * differ from the first guess of {@link #bootstrap()}.
     *
     * @param format      {@code text} or {@code json} ({@code logging.format})
     * @param environment {@code dev}, {@code staging} or {@code prod} ({@code app.environment})
     */
    public static void configure(String format, String environment) {
        String f = lowerCase(format);
        String e = lowerCase(environment);
        if (f.equals(System.getProperty(FORMAT)) && e.equals(System.getProperty(ENVIRONMENT))) {
            return;
        }
        System.setProperty(FORMAT, f);
        System.setProperty(ENVIRONMENT, e);
        context().reconfigure();
    }

    /**
     * Writes every line logged so far and stops logging (at most 2 s): the last step before the process exits.
     * Lines logged afterwards are not written.
     *
     * @return whether everything was written within the bound
     */
    public static boolean stop() {
        LoggerContext context = context();
        stopped = context;
        return context.stop(STOP_BOUND_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts logging again when {@link #stop()} stopped it: for a last line that must still be written after the last
     * step (the hard deadline's, when a JVM shutdown hook hangs once the sequence stopped logging).
     */
    public static void restartIfStopped() {
        LoggerContext context = stopped;
        if (context != null && (context.isStopping() || context.isStopped())) {
            context.start();
        }
    }

    private static LoggerContext context() {
        return (LoggerContext) LogManager.getContext(false);
    }

    private static String setting(String property, String variable, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(variable);
        }
        return value == null || value.isBlank() ? fallback : value.strip();
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static String lowerCase(String value) {
        return value.toLowerCase(Locale.ROOT);
    }

    // Lines printed on System.out, as log events of the "stdout" logger; the logger is looked up at the first line,
    // so that installing the stream does not start Log4j before its system properties are set.
    private static final class StdoutStream extends PrintStream {
        private StdoutStream(PrintStream original) {
            super(new StdoutLines(() -> LogManager.getLogger("stdout"), original.charset()), true,
                  original.charset());
        }
    }
}
