package com.example.payments;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import com.example.payments.http.EvictingConnectionCap;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;

/**
 * The health listener's connection cap makes room for a new connection by closing those that have waited longer than
 * {@link EvictingConnectionCap#GRACE} for a request or for the rest of its head, and closes nothing else: not a
 * connection in its grace, not a connection under the cap. The flood itself, against the packaged jar: HealthFloodIT.
 */
class EvictingConnectionCapTest {

    private static final Duration PAST_GRACE = EvictingConnectionCap.GRACE.plusMillis(500);

    @Test
    void beyondTheCapANewConnectionClosesTheOneIdleLongestAndTheHalfSentOneStaysWhileTheCapIsMet() throws Exception {
        try (TestService service = TestService.start(Map.of("health-server.max-tcp-connections", "2"));
             Socket idle = connect(service);
             Socket halfSent = connectLater(service)) {
            halfSent.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\n"
                                                     .getBytes(StandardCharsets.US_ASCII));
            Thread.sleep(PAST_GRACE);
            try (Socket probe = connect(service)) {
                probe.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                                      .getBytes(StandardCharsets.US_ASCII));
                assertThat(statusLine(probe), startsWith("HTTP/1.1 200"));
            }
            assertThat("the connection idle longest", closedWithin(idle, Duration.ofSeconds(5)), is(true));
            assertThat("the half-sent one, not needed to meet the cap", closedWithin(halfSent, Duration.ofMillis(300)),
                       is(false));
        }
    }

    @Test
    void connectionsInTheirGraceStayBeyondTheCapUntilTheyHaveWaitedLonger() throws Exception {
        try (TestService service = TestService.start(Map.of("health-server.max-tcp-connections", "1"));
             Socket first = connect(service);
             Socket second = connectLater(service)) {
            assertThat("in its grace", closedWithin(first, Duration.ofMillis(300)), is(false));
            Thread.sleep(PAST_GRACE);
            try (Socket third = connect(service)) {
                assertThat(closedWithin(first, Duration.ofSeconds(5)), is(true));
                assertThat(closedWithin(second, Duration.ofSeconds(5)), is(true));
                third.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                                      .getBytes(StandardCharsets.US_ASCII));
                assertThat("the newcomer is served", statusLine(third), startsWith("HTTP/1.1 200"));
            }
        }
    }

    private static Socket connect(TestService service) throws IOException {
        Socket socket = new Socket("127.0.0.1", service.running().health().port());
        socket.setSoTimeout(5000);
        return socket;
    }

    // 200 ms after the previous one, so the server has registered them in that order.
    private static Socket connectLater(TestService service) throws IOException, InterruptedException {
        Thread.sleep(200);
        return connect(service);
    }

    private static String statusLine(Socket socket) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int b = socket.getInputStream().read(); b >= 0 && b != '\n'; b = socket.getInputStream().read()) {
            line.append((char) b);
        }
        return line.toString().strip();
    }

    // Whether the server closes (EOF or reset) within the time, without having sent anything.
    private static boolean closedWithin(Socket socket, Duration time) throws IOException {
        socket.setSoTimeout((int) time.toMillis());
        try {
            return socket.getInputStream().read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
