package com.example.payments;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.OpenApiContract;
import com.example.payments.testing.RawHttp;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Request lines, targets and header fields that Helidon 4.5.0 answered 500 (with a logged stack trace) or served as
 * some other request, on both listeners of the packaged jar, over raw sockets: the table of docs/hostile-clients.md
 * ("Lenient parsing, decided once"). Each row asserts the status, whether the connection is closed after it (a
 * closed one sends nothing more; a kept one serves the next request), that the answer is a problem that never says
 * "Retry with the same Idempotency-Key", that a business answer keeps to the OpenAPI document, and that nothing of it
 * reached the log as a stack trace. An answer written before routing is counted like any other: request metrics and
 * access log.
 */
class HostileRequestLinesIT {

    private static final String HOST = "Host: 127.0.0.1\r\n";
    private static final String RETRY_TEXT = "Retry with the same Idempotency-Key";
    private static ServiceProcess service;

    /** Which listener a row goes to, and the path its healthy request asks for. */
    enum Port {
        BUSINESS("/ping"), HEALTH("/health/live");

        private final String path;

        Port(String path) {
            this.path = path;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        // A body deadline far beyond the socket's 30 s read timeout: an answer that waited for it fails the read.
        service = ServiceProcess.start(Map.of("http.body-timeout", "PT120S"));
        service.awaitReady(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    static Stream<Arguments> table() {
        List<Arguments> rows = new ArrayList<>();
        for (Port port : Port.values()) {
            String p = port.path;
            String other = port == Port.BUSINESS ? "/v1/authorizations" : "/health";
            String get = "GET " + p + " HTTP/1.1\r\n" + HOST;
            // A method that is not a token: 400, closed (the header section was never read).
            rows.add(row(port, "a method with a parenthesis", "G(T " + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, true));
            rows.add(row(port, "a lone brace", "{\r\n\r\n", 400, true));
            rows.add(row(port, "a leading control byte", "\u0001" + get + "\r\n", 400, true));
            rows.add(row(port, "a non-ASCII method", "G\u00e9T " + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, true));
            rows.add(row(port, "an empty method", " " + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, true));
            rows.add(row(port, "a tab after the method", "GET\t" + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, true));
            rows.add(row(port, "a JSON body as a request line, no line end", "{\"merchantId\":\"m_123\",\"amount\":1}",
                         400, true));
            // A known method in another case is unrecognized (methods are case-sensitive): 501, closed.
            rows.add(row(port, "get in lower case", "get " + p + " HTTP/1.1\r\n" + HOST + "\r\n", 501, true));
            rows.add(row(port, "Head in mixed case", "Head " + p + " HTTP/1.1\r\n" + HOST + "\r\n", 501, true));
            // Absolute-form targets: http only, the Host's authority, no userinfo, a port in range, a host.
            rows.add(row(port, "an ftp target", "GET ftp://evil.example" + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400,
                         false));
            rows.add(row(port, "a port out of range", "GET http://evil.example:99999" + p
                         + " HTTP/1.1\r\nHost: evil.example:99999\r\n\r\n", 400, false));
            rows.add(row(port, "a Host port out of range", "GET " + p + " HTTP/1.1\r\nHost: 127.0.0.1:99999\r\n\r\n",
                         400, false));
            rows.add(row(port, "userinfo", "GET http://u:p@evil.example" + p
                         + " HTTP/1.1\r\nHost: evil.example\r\n\r\n", 400, false));
            rows.add(row(port, "an empty host", "GET http://" + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, false));
            rows.add(row(port, "another host than Host", "GET http://evil.example" + p + " HTTP/1.1\r\n" + HOST
                         + "\r\n", 400, false));
            rows.add(row(port, "the Host's own authority", "GET http://127.0.0.1:80" + p + " HTTP/1.1\r\n" + HOST
                         + "\r\n", 200, false));
            // Paths that Helidon would normalize into another resource.
            rows.add(row(port, "an empty segment", "GET /" + p + " HTTP/1.1\r\n" + HOST + "\r\n", 400, false));
            rows.add(row(port, "dot-dot segments", "GET " + other + "/../.." + p + " HTTP/1.1\r\n" + HOST + "\r\n",
                         400, false));
            rows.add(row(port, "percent-encoded dot-dot", "GET " + other + "/%2E%2E" + p + " HTTP/1.1\r\n" + HOST
                         + "\r\n", 400, false));
            rows.add(row(port, "an encoded slash", "GET " + other + "%2Fx HTTP/1.1\r\n" + HOST + "\r\n", 400, false));
            rows.add(row(port, "a path parameter", "GET " + p + ";x=1 HTTP/1.1\r\n" + HOST + "\r\n", 404, false));
            rows.add(row(port, "a percent-encoded unreserved letter", "GET " + p.replace("i", "%69") + " HTTP/1.1\r\n"
                         + HOST + "\r\n", 200, false));
            // Header fields.
            rows.add(row(port, "an empty header name", get + ": value\r\n\r\n", 400, true));
            rows.add(row(port, "two Content-Types", get + "Content-Type: application/json\r\nContent-Type: text/plain"
                         + "\r\n\r\n", 400, false));
            rows.add(row(port, "a space before the colon", get + "X-A : b\r\n\r\n", 400, true));
            rows.add(row(port, "Content-Type twice, in two cases", get + "Content-Type: application/json\r\n"
                         + "content-type: application/json\r\n\r\n", 400, false));
            rows.add(row(port, "a Content-Type that is not a media type", get + "Content-Type: json\r\n\r\n", 415,
                         false));
            rows.add(row(port, "an unknown expectation", get + "Expect: foo\r\n\r\n", 417, false));
            rows.add(row(port, "an unknown expectation after 100-continue", get + "Expect: 100-continue, foo\r\n\r\n",
                         417, false));
        }
        String post = "POST /v1/authorizations HTTP/1.1\r\n" + HOST + TestCredentials.HEADER_LINE
                      + "Content-Type: application/json\r\nIdempotency-Key: \"" + UUID.randomUUID() + "\"\r\n";
        rows.add(row(Port.BUSINESS, "an unknown expectation with a body left unread", post + "Expect: foo\r\n"
                     + "Content-Length: " + Http.VALID_BODY.length() + "\r\n\r\n" + Http.VALID_BODY, 417, true));
        rows.add(row(Port.BUSINESS, "a chunked body that is not chunked", post + "Transfer-Encoding: chunked\r\n\r\n"
                     + Http.VALID_BODY, 400, true));
        return rows.stream();
    }

    @ParameterizedTest(name = "{0} {1}: {3}")
    @MethodSource
    void table(Port port, String name, String request, int status, boolean closed) throws Exception {
        int logged = service.output().size();
        int listener = port == Port.BUSINESS ? service.businessPort() : service.healthPort();
        try (RawHttp connection = RawHttp.connect(listener, null, name)) {
            connection.sendQuietly(request);
            RawHttp.Response response = connection.readResponse(false);
            assertThat(response.body(), response.status(), is(status));
            assertThat(response.body(), not(containsString(RETRY_TEXT)));
            if (status != 200) {
                assertThat(response.headers().get("content-type"), is("application/problem+json"));
                assertThat(response.body(),
                           containsString("\"requestId\":\"" + response.headers().get("x-request-id")));
            }
            if (port == Port.BUSINESS) {
                String[] line = request.split("\r\n", 2)[0].split(" ");
                // The documented path the answer is judged against: a target the service refuses as such, or a method
                // it does not recognize, is judged as an undocumented path.
                boolean documented = line.length == 3
                                     && (line[1].equals("/ping") || line[1].equals("/v1/authorizations"));
                String path = status == 200 ? "/ping" : documented && status != 501 ? line[1] : "/not-documented";
                String method = line[0].toUpperCase(Locale.ROOT);
                OpenApiContract.check(method.matches("[A-Z]+") ? method : "GET", listener, path, status,
                        header -> Optional.ofNullable(response.headers().get(header.toLowerCase(Locale.ROOT))),
                        response.body());
            }
            assertThat("Connection: close", response.connectionClose(), is(closed));
            if (closed) {
                assertThat("closed, nothing read after the answer", connection.awaitServerClose(Duration.ofSeconds(5)),
                           is(true));
            } else {
                connection.send("GET " + port.path + " HTTP/1.1\r\n" + HOST + "\r\n");
                assertThat("kept: the next request is served", connection.readResponse(false).status(), is(200));
            }
        }
        assertNoStackTrace(logged);
    }

    @Test
    void theBytesLeftByATooShortContentLengthAreABadRequestLineAnsweredAtOnce() throws Exception {
        int logged = service.output().size();
        try (RawHttp connection = RawHttp.connect(service.businessPort(), null, "short-length")) {
            connection.sendQuietly("POST /v1/authorizations HTTP/1.1\r\n" + HOST + TestCredentials.HEADER_LINE
                                   + "Content-Type: application/json\r\nIdempotency-Key: \"" + UUID.randomUUID()
                                   + "\"\r\nContent-Length: 20\r\n\r\n" + Http.VALID_BODY);
            RawHttp.Response first = connection.readResponse(false);
            assertThat(first.body(), first.status(), is(400));
            assertThat(first.connectionClose(), is(false));
            // The tail of the JSON body (card number and CVC included) is read as a request line, without a line end.
            RawHttp.Response rest = connection.readResponse(false);
            assertThat(rest.body(), rest.status(), is(400));
            assertThat(rest.body(), containsString("/problems/bad-request\""));
            assertThat(rest.connectionClose(), is(true));
            assertThat(connection.awaitServerClose(Duration.ofSeconds(5)), is(true));
        }
        assertNoStackTrace(logged);
        Thread.sleep(200);
        List<String> lines = service.output().subList(logged, service.output().size());
        assertThat(lines.stream().filter(line -> line.contains("4111111111111111") || line.contains("\"cvc\""))
                           .toList(), is(empty()));
    }

    @Test
    void anAnswerWrittenBeforeRoutingIsCountedInTheMetricsAndTheAccessLog() throws Exception {
        Map<String, String> series = Map.of("method", "other", "route", "unmatched", "status", "400");
        double before = MetricsScrape.of(service.healthPort()).sum("http_server_request_duration_seconds_count",
                                                                   series);
        String requestId;
        try (RawHttp connection = RawHttp.connect(service.businessPort(), null, "counted")) {
            connection.sendQuietly("G(T /ping HTTP/1.1\r\n" + HOST + "\r\n");
            RawHttp.Response response = connection.readResponse(false);
            assertThat(response.status(), is(400));
            requestId = response.headers().get("x-request-id");
        }
        String line = service.awaitLine(text -> text.contains("[" + requestId + "]") && text.contains("AccessLog"),
                                        Duration.ofSeconds(10));
        assertThat(line, containsString("AccessLog: other unmatched 400 "));
        double after = MetricsScrape.of(service.healthPort()).sum("http_server_request_duration_seconds_count",
                                                                  series);
        assertThat(after - before, is(1.0));
    }

    // Helidon logs a 500 of its own with a warning and 17 lines of stack trace; nothing of the kind may appear.
    private static void assertNoStackTrace(int from) throws InterruptedException {
        Thread.sleep(200);
        List<String> lines = service.output();
        List<String> traces = lines.subList(from, lines.size()).stream()
                .filter(line -> line.startsWith("\tat ") || line.contains("Exception") || line.contains(" ERROR "))
                .toList();
        assertThat(traces, is(empty()));
    }

    private static Arguments row(Port port, String name, String request, int status, boolean closed) {
        return Arguments.of(port, name, request, status, closed);
    }
}
