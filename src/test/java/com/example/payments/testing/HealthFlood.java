package com.example.payments.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A kubelet's liveness probe against a health listener whose connection slots are held by others, for
 * {@code HealthFloodIT} and {@code load-tests/health-flood/run.sh} (the same code, run for a few seconds or for 30 s).
 *
 * <p>Three kinds of client run at once, each on platform threads of this JVM:
 * <ul>
 *     <li><b>holders</b>: half of them connect and send nothing (idle), half send a request line and one header and
 *     stop there (half-sent: {@code GET /health/live HTTP/1.1\r\nHost: x\r\n}); each reopens its connection as soon
 *     as the server closes it;</li>
 *     <li><b>business clients</b> (optional): closed-loop {@code POST /v1/authorizations} on keep-alive connections,
 *     each with a new {@code Idempotency-Key}, as fast as the service answers;</li>
 *     <li><b>the probe</b>: every second, like the kubelet, a fresh connection, {@code GET /health/live} and
 *     {@code Connection: close}, given 1 s from the connect to the status line; answered means a status line within
 *     that second (the status itself is recorded: the kubelet counts 200-399 as success).</li>
 * </ul>
 */
public final class HealthFlood {

    /** How long a probe may take, from the connect to its status line: the kubelet's {@code timeoutSeconds: 1}. */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration PROBE_PERIOD = Duration.ofSeconds(1);
    private static final byte[] HALF_SENT =
            "GET /health/live HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * One probe.
     *
     * @param sentMillis   when it was sent, ms from the start of the run
     * @param latencyNanos connect to status line, or how long it waited before giving up
     * @param status       the status, or 0 without a status line within {@link #PROBE_TIMEOUT}
     * @param failure      why there was no answer, or empty
     */
    public record Probe(long sentMillis, long latencyNanos, int status, String failure) {
        /**
         * Whether the kubelet would count it as a success: a 2xx or 3xx status within the timeout.
         *
         * @return {@code true} when answered 200-399 in time
         */
        public boolean succeeded() {
            return status >= 200 && status < 400;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "t=%d ms: %s in %.1f ms", sentMillis,
                                 status == 0 ? "no answer (" + failure + ")" : "status " + status,
                                 latencyNanos / 1e6);
        }
    }

    /**
     * What one run saw.
     *
     * @param probes          every probe, in order
     * @param holderOpens     connections the holders opened (each one the server closed was reopened)
     * @param businessAnswers responses the business clients got
     * @param businessErrors  business connections that broke
     */
    public record Result(List<Probe> probes, long holderOpens, long businessAnswers, long businessErrors) {

        /**
         * Probes that got no success within the timeout.
         *
         * @return the failed probes, in order
         */
        public List<Probe> failed() {
            return probes.stream().filter(probe -> !probe.succeeded()).toList();
        }

        /**
         * A latency percentile over the probes (those without an answer count as their wait).
         *
         * @param percentile e.g. 99
         * @return the latency in ms
         */
        public double latencyMillis(double percentile) {
            List<Long> sorted = new ArrayList<>(probes.stream().map(Probe::latencyNanos).toList());
            Collections.sort(sorted);
            if (sorted.isEmpty()) {
                return 0;
            }
            int index = (int) Math.ceil(percentile / 100 * sorted.size()) - 1;
            return sorted.get(Math.clamp(index, 0, sorted.size() - 1)) / 1e6;
        }

        /**
         * One line: answered / sent, max and p99 latency, holder reopenings, business answers.
         *
         * @return e.g. {@code 30/30 probes answered 2xx within 1 s, max 12.3 ms, p99 12.3 ms, ...}
         */
        public String summary() {
            return String.format(Locale.ROOT, "%d/%d probes answered 2xx within 1 s, max %.1f ms, p99 %.1f ms, "
                                              + "p50 %.1f ms; holders opened %d connections; business %d answers, "
                                              + "%d broken connections",
                                 probes.size() - failed().size(), probes.size(), latencyMillis(100),
                                 latencyMillis(99), latencyMillis(50), holderOpens, businessAnswers, businessErrors);
        }
    }

    private HealthFlood() {
    }

    /**
     * Runs the flood and the probe for the duration, then stops every client it started.
     *
     * @param healthPort      the health listener's port on 127.0.0.1
     * @param holders         connections held on the health listener (half idle, half half-sent)
     * @param businessPort    the business listener's port on 127.0.0.1
     * @param businessClients closed-loop business clients (0 for none)
     * @param authorization   the business clients' {@code Authorization} header line, CRLF included
     * @param duration        how long the probe runs (the flood starts 500 ms earlier and ends with it)
     * @return what the probe and the clients saw
     * @throws InterruptedException when interrupted
     */
    public static Result run(int healthPort, int holders, int businessPort, int businessClients, String authorization,
                             Duration duration) throws InterruptedException {
        AtomicLong holderOpens = new AtomicLong();
        AtomicLong businessAnswers = new AtomicLong();
        AtomicLong businessErrors = new AtomicLong();
        List<Socket> open = new CopyOnWriteArrayList<>();
        long start = System.nanoTime();
        long end = start + Duration.ofMillis(500).plus(duration).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < businessClients; i++) {
            int client = i;
            threads.add(Thread.ofPlatform().daemon(true).name("business-" + i).start(
                    () -> business(businessPort, client, authorization, end, businessAnswers, businessErrors, open)));
        }
        for (int i = 0; i < holders; i++) {
            boolean halfSent = i % 2 == 1;
            threads.add(Thread.ofPlatform().daemon(true).name("holder-" + i).start(
                    () -> hold(healthPort, halfSent, end, holderOpens, open)));
        }
        // The holders fill the slots within a few ms; the first probe comes half a second into the load.
        Thread.sleep(500);
        long probesStart = System.nanoTime();
        List<Probe> probes = new ArrayList<>();
        for (int i = 0; System.nanoTime() < end - PROBE_PERIOD.toNanos() / 2; i++) {
            long due = probesStart + i * PROBE_PERIOD.toNanos();
            long wait = due - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Duration.ofNanos(wait));
            }
            probes.add(probe(healthPort, (System.nanoTime() - probesStart) / 1_000_000));
        }
        for (Socket socket : open) {
            closeQuietly(socket);
        }
        for (Thread thread : threads) {
            thread.interrupt();
            thread.join(Duration.ofSeconds(5));
        }
        return new Result(List.copyOf(probes), holderOpens.get(), businessAnswers.get(), businessErrors.get());
    }

    private static Probe probe(int port, long sentMillis) {
        long sent = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), (int) PROBE_TIMEOUT.toMillis());
            long left = PROBE_TIMEOUT.toMillis() - (System.nanoTime() - sent) / 1_000_000;
            if (left <= 0) {
                return new Probe(sentMillis, System.nanoTime() - sent, 0, "connect took the whole timeout");
            }
            socket.setSoTimeout((int) left);
            socket.getOutputStream().write(("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                            + "User-Agent: kube-probe/1.31\r\nAccept: */*\r\nConnection: close\r\n\r\n")
                                                   .getBytes(StandardCharsets.US_ASCII));
            String statusLine = readLine(socket.getInputStream(), sent + PROBE_TIMEOUT.toNanos(), socket);
            long latency = System.nanoTime() - sent;
            if (statusLine == null) {
                return new Probe(sentMillis, latency, 0, "closed without a status line");
            }
            String[] parts = statusLine.split(" ", 3);
            return new Probe(sentMillis, latency, parts.length > 1 ? Integer.parseInt(parts[1]) : 0, "");
        } catch (SocketTimeoutException e) {
            return new Probe(sentMillis, System.nanoTime() - sent, 0, "timed out");
        } catch (IOException | RuntimeException e) {
            return new Probe(sentMillis, System.nanoTime() - sent, 0, String.valueOf(e));
        }
    }

    // Reads up to the first CRLF within the deadline, or null at EOF.
    private static String readLine(InputStream in, long deadlineNanos, Socket socket) throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new SocketTimeoutException("no status line within the timeout");
            }
            socket.setSoTimeout((int) left);
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                return line.toString().strip();
            }
            line.append((char) b);
        }
    }

    private static void hold(int port, boolean halfSent, long end, AtomicLong opens, List<Socket> open) {
        byte[] sink = new byte[512];
        while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
            Socket socket = new Socket();
            open.add(socket);
            try {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                opens.incrementAndGet();
                if (halfSent) {
                    socket.getOutputStream().write(HALF_SENT);
                }
                // Until the server closes it (or answers: then it is read and the connection left to close).
                while (System.nanoTime() < end) {
                    socket.setSoTimeout((int) Math.max(1, Math.min(500, (end - System.nanoTime()) / 1_000_000)));
                    try {
                        if (socket.getInputStream().read(sink) < 0) {
                            break;
                        }
                    } catch (SocketTimeoutException e) {
                        // still held
                    }
                }
            } catch (IOException e) {
                // closed or reset by the server: reopen
                pause(10);
            } finally {
                open.remove(socket);
                closeQuietly(socket);
            }
        }
    }

    private static void business(int port, int client, String authorization, long end, AtomicLong answers,
                                 AtomicLong errors, List<Socket> open) {
        byte[] body = Http.VALID_BODY.getBytes(StandardCharsets.UTF_8);
        long request = 0;
        while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
            try (Socket socket = new Socket()) {
                open.add(socket);
                socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                socket.setSoTimeout(30_000);
                socket.setTcpNoDelay(true);
                OutputStream out = socket.getOutputStream();
                InputStream in = new java.io.BufferedInputStream(socket.getInputStream());
                while (System.nanoTime() < end) {
                    String head = "POST /v1/authorizations HTTP/1.1\r\nHost: 127.0.0.1\r\n" + authorization
                                  + "Content-Type: application/json\r\nIdempotency-Key: flood-" + client + "-"
                                  + request++ + "-" + System.nanoTime() + "\r\nContent-Length: " + body.length
                                  + "\r\n\r\n";
                    out.write(head.getBytes(StandardCharsets.US_ASCII));
                    out.write(body);
                    out.flush();
                    if (!readResponse(in)) {
                        break;
                    }
                    answers.incrementAndGet();
                }
            } catch (IOException e) {
                if (System.nanoTime() < end) {
                    errors.incrementAndGet();
                    pause(10);
                }
            } finally {
                open.removeIf(Socket::isClosed);
            }
        }
    }

    // Reads one response with a Content-Length body; false when the server closes the connection after it.
    private static boolean readResponse(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int length = 0;
        boolean close = false;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed mid-response");
            }
            if (b != '\n') {
                line.append((char) b);
                continue;
            }
            String header = line.toString().strip().toLowerCase(Locale.ROOT);
            line.setLength(0);
            if (header.isEmpty()) {
                break;
            }
            if (header.startsWith("content-length:")) {
                length = Integer.parseInt(header.substring(15).strip());
            } else if (header.equals("connection: close")) {
                close = true;
            }
        }
        if (in.readNBytes(length).length < length) {
            throw new IOException("closed mid-body");
        }
        return !close;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // the run is over
        }
    }
}
