package com.example.payments.observability;

import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;

import com.example.payments.http.RequestIds;
import com.example.payments.logging.Logging;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.ThreadContext;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.Layout;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.OutputStreamAppender;
import org.apache.logging.log4j.core.async.AsyncLoggerContext;
import org.apache.logging.log4j.core.jmx.RingBufferAdminMBean;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One access-log line through the service's real logging pipeline: the production {@code log4j2.xml} in JSON
 * ({@code logging.format: json}), its async loggers (the disruptor), the request id in the MDC, an
 * {@link AccessLogLine} like the filter's, the ECS template and {@code CardMaskingLayout} (masking included). Only the
 * console is replaced, by an appender with the same layout writing to a stream that discards the bytes, so the run
 * measures the pipeline, not a terminal.
 *
 * <ul>
 *     <li>{@link #accessLogLine}: a line logged on the benchmark thread, in a steady stream. Once the ring buffer is
 *     full (within milliseconds) every call waits for room, so the time per call is the pipeline's time per line:
 *     the slower of the request's side (building and enqueueing the event) and Log4j's thread (formatting, masking,
 *     writing);</li>
 *     <li>{@link #burstOfLines}: bursts of {@value #BURST} lines that never fill the ring buffer (it is drained
 *     between bursts, outside the measured call), as a service that is not saturated logs them: the request's side
 *     is only building and enqueueing the event, and the CPU per line is the request thread's share (measured in the
 *     call) plus Log4j's thread's;</li>
 *     <li>{@link #formatAndMask}: the layout alone (ECS JSON and masking) on one event: the background thread's share
 *     of a line.</li>
 * </ul>
 *
 * The figure is wall time per call, which a busy machine inflates (other processes take the CPUs). So each
 * measurement iteration also prints the CPU time per call, which the load of the machine changes little:
 * {@code cpu per call: process <µs>, benchmark thread <µs>, Log4j threads <µs>}: the process's CPU time (every
 * thread: the benchmark's, Log4j's background thread, GC and JIT), the benchmark thread's (with a full ring buffer,
 * this includes its waiting for room, which spins) and Log4j's threads', over the calls of the iteration.
 *
 * <p>Test scope, never in the jar. Run: {@code load-tests/access-log-line/run.sh}; report in
 * {@code load-tests/reports/access-log-line.md}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 10, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager",
        "-Dpayments.logging.format=json", "-Dlog4j2.configurationFile=classpath:log4j2.xml"})
public class AccessLogLineBenchmark {

    private static final String REQUEST_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final int BURST = 1000;

    private Logger logger;
    private Layout<?> layout;
    private Log4jLogEvent event;
    private long duration;
    private String line;
    private long calls;
    private long processCpu;
    private long threadCpu;
    private long log4jCpu;
    private long inCallCpu;
    private RingBufferAdminMBean ringBuffer;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final com.sun.management.OperatingSystemMXBean system =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** Loads the production configuration and swaps the console for a discarding stream with the same layout. */
    @Setup
    public void setUp() {
        Logging.bootstrap();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        Appender console = configuration.getAppender("console");
        layout = console.getLayout();
        // As the console: the same layout, flushed at the end of each batch.
        Appender discarding = OutputStreamAppender.newBuilder().setName("discarding").setLayout(layout)
                .setImmediateFlush(false).setTarget(OutputStream.nullOutputStream()).build();
        discarding.start();
        configuration.addAppender(discarding);
        LoggerConfig root = configuration.getRootLogger();
        root.removeAppender("console");
        root.addAppender(discarding, org.apache.logging.log4j.Level.ALL, null);
        context.updateLoggers();
        logger = LogManager.getLogger(AccessLog.LOGGER);
        ringBuffer = ((AsyncLoggerContext) context).createRingBufferAdmin();
        ThreadContext.put(RequestIds.MDC_KEY, REQUEST_ID);
        event = Log4jLogEvent.newBuilder().setLoggerName(AccessLog.LOGGER).setLevel(org.apache.logging.log4j.Level.INFO)
                .setMessage(new AccessLogLine("POST", "/v1/authorizations", 201, 12_400_000, "m_123"))
                .setThreadName("benchmark").build();
        line = (String) layout.toSerializable(event);
    }

    /** Starts counting the iteration's calls and CPU time. */
    @Setup(Level.Iteration)
    public void startIteration() {
        calls = 0;
        inCallCpu = 0;
        processCpu = system.getProcessCpuTime();
        threadCpu = threads.getCurrentThreadCpuTime();
        log4jCpu = log4jThreadsCpu();
    }

    // CPU time of Log4j's own threads (the async loggers' background thread), in ns.
    private long log4jThreadsCpu() {
        long total = 0;
        for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("Log4j2")) {
                total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return total;
    }

    /** The state of {@link #burstOfLines}: an empty ring buffer before each call. */
    @State(Scope.Benchmark)
    public static class EmptyRingBuffer {
        /**
         * Waits until Log4j's thread has written every line logged so far (outside the measured call).
         *
         * @param benchmark the benchmark's state
         */
        @Setup(Level.Invocation)
        public void drained(AccessLogLineBenchmark benchmark) {
            benchmark.awaitDrained();
        }
    }

    private void awaitDrained() {
        while (ringBuffer.getRemainingCapacity() < ringBuffer.getBufferSize()) {
            Thread.onSpinWait();
        }
    }

    /** Prints the iteration's CPU time per call, once Log4j's thread has written every line. */
    @TearDown(Level.Iteration)
    public void endIteration() {
        awaitDrained();
        double process = (system.getProcessCpuTime() - processCpu) / 1000.0 / Math.max(1, calls);
        double thread = (threads.getCurrentThreadCpuTime() - threadCpu) / 1000.0 / Math.max(1, calls);
        double log4j = (log4jThreadsCpu() - log4jCpu) / 1000.0 / Math.max(1, calls);
        double inCall = inCallCpu / 1000.0 / Math.max(1, calls);
        System.out.printf("cpu per call: process %.3f us, benchmark thread %.3f us, Log4j threads %.3f us, "
                          + "benchmark thread in the call %.3f us (%d calls)%n", process, thread, log4j, inCall,
                          calls);
    }

    /** Writes what is still queued. */
    @TearDown
    public void tearDown() {
        Logging.stop();
    }

    /**
     * One access-log line as the filter logs it.
     */
    @Benchmark
    public void accessLogLine() {
        calls++;
        duration = (duration + 1_013) % 50_000_000;
        logger.info(new AccessLogLine("POST", "/v1/authorizations", 201, duration, "m_123"));
    }

    /**
     * A burst of {@value #BURST} access-log lines into an empty ring buffer.
     *
     * @param empty drains the ring buffer before the call
     */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OperationsPerInvocation(BURST)
    @Warmup(iterations = 200, batchSize = 1)
    @Measurement(iterations = 200, batchSize = 1)
    public void burstOfLines(EmptyRingBuffer empty) {
        long start = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < BURST; i++) {
            duration = (duration + 1_013) % 50_000_000;
            logger.info(new AccessLogLine("POST", "/v1/authorizations", 201, duration, "m_123"));
        }
        inCallCpu += threads.getCurrentThreadCpuTime() - start;
        calls += BURST;
    }

    /**
     * The line's JSON and masking alone.
     *
     * @return the line
     */
    @Benchmark
    public Object formatAndMask() {
        calls++;
        return layout.toSerializable(event);
    }

    /**
     * The masking of a formatted line alone.
     *
     * @return the line
     */
    @Benchmark
    public String mask() {
        calls++;
        return com.example.payments.carddata.PanDetector.mask(line);
    }
}
