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
 * A pooled keep-alive connection the issuer closed while it was idle makes the next call on it fail before any byte
 * of the answer (about 15 spurious 502s per fault-soak run). {@link HttpAuthorizer} sends such a call once more on a
 * new connection and counts it; a call that fails on a connection it just opened is not retried. The issuer here is a
 * socket that closes a connection when a second request arrives on it, exactly as a server whose idle timeout fired
 * while the request was on its way: deterministic where the race with a real server is not ({@code HttpAuthorizerIT}
 * runs the real simulator with a short idle timeout).
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
    void aCallOnAPooledConnectionTheIssuerClosedIsSentAgainOnANewConnection() throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(1);
                HttpAuthorizer authorizer = HttpAuthorizer.create(issuer.uri(), Duration.ofSeconds(5), meters)) {
            long before = retries();
            // Odd calls open a connection that is pooled; even calls take it, the issuer closes it as the request
            // arrives, and the call is sent again on a connection of its own (not pooled).
            for (int call = 1; call <= 4; call++) {
                assertThat("call " + call + " decided, no 502 for a dead pooled connection",
                           authorizer.authorize(attempt("att_" + call)).approved(), is(true));
            }

            assertThat("each dead pooled connection cost one retry", retries() - before, is(2L));
            assertThat("two pooled connections and two new ones for the retries", issuer.connections(), is(4));
        }
    }

    @Test
    void aCallThatFailsOnANewConnectionIsNotRetried() throws Exception {
        try (ClosingIssuer issuer = ClosingIssuer.start(0);
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
        private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

        private ClosingIssuer(ServerSocket server, int answered) {
            this.server = server;
            this.answered = answered;
        }

        static ClosingIssuer start(int answered) throws IOException {
            ClosingIssuer issuer = new ClosingIssuer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()),
                                                     answered);
            issuer.threads.submit(issuer::accept);
            return issuer;
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getLocalPort());
        }

        int connections() {
            return connections.get();
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
                for (int request = 0; readRequest(in); request++) {
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
            } catch (IOException e) {
                // the client went away
            }
        }

        // Reads one request (head and Content-Length body); false at the end of the stream.
        private static boolean readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                if (head.size() >= 4 && head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
                    break;
                }
            }
            if (b < 0) {
                return false;
            }
            int length = 0;
            for (String line : head.toString(StandardCharsets.US_ASCII).split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring("content-length:".length()).trim());
                }
            }
            return in.readNBytes(length).length == length;
        }

        @Override
        public void close() throws IOException {
            server.close();
            threads.shutdownNow();
        }
    }
}
