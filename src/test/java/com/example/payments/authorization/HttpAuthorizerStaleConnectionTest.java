package com.example.payments.authorization;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A pooled keep-alive connection the issuer closed can make the next call on it fail before any byte of the answer.
 * {@link HttpAuthorizer} sends such a call once more on a new connection only when the request provably never left
 * whole (writing it failed: the connection was already reset), and counts it; a request written in full and then
 * answered by a closed connection may have been read and decided, so it is an unknown outcome (502), never sent
 * twice, unless the acquirer deduplicates attempt ids ({@code authorizer.acquirer-deduplicates}, the default), when it
 * goes out once more under the same attempt id; a call that fails on a connection it just opened is not retried. The issuer here is a socket: one that closes
 * a connection after reading the next request on it (a server that read the request, then died), one that resets a
 * connection at once after answering (a server whose idle timeout fired before the next request).
 */
class HttpAuthorizerStaleConnectionTest {

    private final MeterRegistry meters = Metrics.createMeterRegistry(MetricsConfig.create());

    private static AuthorizationAttempt attempt(String attemptId) {
        return new AuthorizationAttempt(attemptId, new AuthorizationRequest("m_123", "order-" + attemptId,
                new Amount(1299, "EUR"), new Card("4111111111111111", 12, 2030, "123")));
    }

    private long retries() {
        return meters.counter("authorizer_connection_retries", List.of()).map(Counter::count).orElse(0L);
    }

    @Test
    void aRequestWrittenInFullOnAConnectionTheIssuerThenClosedIsAnUnknownOutcomeNeverSentTwice() throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(1, false);
                HttpAuthorizer authorizer = HttpAuthorizer.create(issuer.uri(), Duration.ofSeconds(5), meters)) {
            long before = retries();
            assertThat(authorizer.authorize(attempt("att_1")).approved(), is(true));
            // The issuer reads the second request in full, then closes the connection without an answer.
            assertThrows(Authorizer.IssuerUnavailableException.class, () -> authorizer.authorize(attempt("att_2")));

            assertThat("not sent again: the issuer may have decided it", retries() - before, is(0L));
            assertThat("each attempt id read once", issuer.requests(), is(2));
        }
    }

    @Test
    void withADeduplicatingAcquirerARequestWrittenInFullOnAClosedConnectionGoesOutOnceMoreUnderTheSameAttemptId()
            throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(1, false);
                HttpAuthorizer authorizer = HttpAuthorizer.create(issuer.uri(), Duration.ofSeconds(5), meters, true)) {
            long before = retries();
            assertThat(authorizer.authorize(attempt("att_1")).approved(), is(true));
            // The issuer reads the second request in full, then closes the connection without an answer: sent once
            // more on a new connection, where the acquirer (deduplicating) answers the same attempt id.
            assertThat(authorizer.authorize(attempt("att_2")).approved(), is(true));

            assertThat("sent once more, counted", retries() - before, is(1L));
            assertThat("the re-send carries the same attempt id", issuer.distinctAttempts(), is(2));
            assertThat("read twice: the acquirer's deduplication makes it one decision", issuer.requests(), is(3));
        }
    }

    @Test
    void aPooledConnectionTheIssuerResetIsReplacedAndNoAttemptReachesTheIssuerTwice() throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(1, true);
                HttpAuthorizer authorizer = HttpAuthorizer.create(issuer.uri(), Duration.ofSeconds(5), meters)) {
            for (int call = 1; call <= 4; call++) {
                // The reset reaches the client's socket before the next call takes it from the pool.
                Thread.sleep(100);
                try {
                    authorizer.authorize(attempt("att_" + call));
                } catch (Authorizer.IssuerUnavailableException e) {
                    // An unknown outcome is allowed; a request read twice is not.
                }
            }
            assertThat("every request read at most once, each on a connection of its own", issuer.requests(),
                       is(issuer.distinctAttempts()));
        }
    }

    @Test
    void aCallThatFailsOnANewConnectionIsNotRetried() throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(0, false);
                HttpAuthorizer authorizer = HttpAuthorizer.create(issuer.uri(), Duration.ofSeconds(5), meters)) {
            long before = retries();
            assertThrows(Authorizer.IssuerUnavailableException.class, () -> authorizer.authorize(attempt("att_1")));

            assertThat(retries() - before, is(0L));
            assertThat("one connection: the failure was the issuer's, not a stale connection", issuer.connections(),
                       is(1));
        }
    }

    /**
     * An issuer that answers the first {@code answered} requests of each connection with an approval (keep-alive) and
     * closes the connection when the next one arrives, without answering it.
     */
    private static final class ClosingIssuer implements AutoCloseable {

        private final ServerSocket server;
        private final int answered;
        private final AtomicInteger connections = new AtomicInteger();
        private final AtomicInteger requests = new AtomicInteger();
        private final java.util.Set<String> attempts = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private final boolean reset;
        private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

        private ClosingIssuer(ServerSocket server, int answered, boolean reset) {
            this.server = server;
            this.answered = answered;
            this.reset = reset;
        }

        // reset: after the answered requests, reset the connection at once (SO_LINGER 0) instead of reading the next.
        static ClosingIssuer start(int answered, boolean reset) throws IOException {
            ClosingIssuer issuer = new ClosingIssuer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()),
                                                     answered, reset);
            issuer.threads.submit(issuer::accept);
            return issuer;
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getLocalPort());
        }

        int connections() {
            return connections.get();
        }

        int requests() {
            return requests.get();
        }

        int distinctAttempts() {
            return attempts.size();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    connections.incrementAndGet();
                    threads.submit(() -> serve(socket));
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(Socket socket) {
            try (socket) {
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                for (int request = 0; request < answered || !reset; request++) {
                    String attempt = readRequest(in);
                    if (attempt == null) {
                        return;
                    }
                    requests.incrementAndGet();
                    attempts.add(attempt);
                    if (request >= answered) {
                        return;
                    }
                    byte[] body = ("{\"status\":\"APPROVED\",\"decidedAt\":\"2026-11-30T20:38:51.378Z\"}")
                            .getBytes(StandardCharsets.UTF_8);
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                               + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(body);
                    out.flush();
                }
                socket.setSoLinger(true, 0);
            } catch (IOException e) {
                // the client went away
            }
        }

        // Reads one request (head and Content-Length body): its Idempotency-Key, null at the end of the stream.
        private static String readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                if (head.size() >= 4 && head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
                    break;
                }
            }
            if (b < 0) {
                return null;
            }
            int length = 0;
            String key = "";
            for (String line : head.toString(StandardCharsets.US_ASCII).split("\r\n")) {
                String lower = line.toLowerCase(Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring("content-length:".length()).trim());
                } else if (lower.startsWith("idempotency-key:")) {
                    key = line.substring("idempotency-key:".length()).trim();
                }
            }
            return in.readNBytes(length).length == length ? key : null;
        }

        @Override
        public void close() throws IOException {
            server.close();
            threads.shutdownNow();
        }
    }
}
