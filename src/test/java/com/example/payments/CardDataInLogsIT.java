package com.example.payments;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.example.payments.testing.Bytes;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;
import com.example.payments.testing.CardNumbers;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * No log line of the packaged service ever holds a card number or a CVC. An attack corpus (broken
 * chunked framing, chunk extensions, chunk data not followed by CRLF, raw bodies under
 * {@code Transfer-Encoding: chunked}, malformed JSON and UTF-8, card data in headers, path and query, bad request
 * lines, and every early answer of the HTTP edge: 405, 501, 414, 431, 505, an unread body after
 * {@code Expect: 100-continue}, a header section and a body that miss their deadlines) goes over raw sockets to both
 * listeners, in both log formats; then every line the process wrote (stdout and stderr, shutdown included) is scanned.
 * The listeners hand Helidon's own messages, which may quote the request, to their direct handler
 * ({@code error-handling.include-entity}): the run with every logger at {@code ALL} shows none of them is logged.
 */
class CardDataInLogsIT {

    private static final List<String> PANS = List.of("4111111111111111", "5555555555554444", "378282246310005",
                                                     "6011111111111117", "4000000000000002");
    // Four digits so that they do not turn up by chance in a timestamp or a port number.
    private static final List<String> CVCS = List.of("7395", "8264", "9153", "6428");

    // Short request deadlines, so that the attacks that stall end within seconds.
    private static final String DEADLINE = "PT2S";

    /**
     * One hostile request.
     *
     * @param name         for the failure message
     * @param bytes        what is written to the socket (then its output is shut down, unless it stalls)
     * @param readsTheBody {@code true} when the business listener must read the body and answer 400 with
     *                     {@code Connection: close} because its framing is broken
     * @param stalls       {@code true} when the client then sends nothing more and keeps its side open, until the
     *                     server gives up on it ({@code http.header-timeout}, {@code http.body-timeout})
     * @param answer       the status of the business listener's first answer, so that the attack is known to reach
     *                     the path it is named for; {@code 0} unchecked, {@code -1} no answer at all
     */
    private record Attack(String name, byte[] bytes, boolean readsTheBody, boolean stalls, int answer) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"text", "json", "text, io.helidon at ALL"})
    void noLogLineHoldsACardNumberOrACvcAfterTheAttackCorpus(String setting, @TempDir Path dir) throws Exception {
        Map<String, String> properties = new HashMap<>(Map.of("logging.format", setting.split(",")[0],
                                                              "http.header-timeout", DEADLINE,
                                                              "http.body-timeout", DEADLINE));
        if (setting.contains("ALL")) {
            // A forker debugging Helidon: every Helidon logger and every one of this service (its package, so that a
            // rename keeps it) at its finest level, in a file merged with the shipped log4j2.xml
            // (docs/observability.md#logs).
            Path file = dir.resolve("log-levels.xml");
            Files.writeString(file, """
                    <Configuration>
                        <Loggers>
                            <Logger name="io.helidon" level="all"/>
                            <Logger name="%s" level="all"/>
                        </Loggers>
                    </Configuration>
                    """.formatted(CardDataInLogsIT.class.getPackageName()));
            properties.put("log4j2.configurationFile", "classpath:log4j2.xml," + file);
        }
        List<String> output;
        try (ServiceProcess service = ServiceProcess.start(properties)) {
            service.awaitReady(Duration.ofSeconds(30));
            List<Attack> corpus = corpus();
            // The attacks that stall wait seconds for the server's deadline: all of them at once, in the background,
            // while the others go one after another; their answers are checked in corpus order like the rest.
            Map<String, Future<List<Answer>>> stalled = new HashMap<>();
            ExecutorService background = Executors.newVirtualThreadPerTaskExecutor();
            for (Attack attack : corpus) {
                for (int port : new int[] {service.businessPort(), service.healthPort()}) {
                    if (attack.stalls()) {
                        stalled.put(attack.name() + port, background.submit(() -> send(port, attack)));
                    }
                }
            }
            for (Attack attack : corpus) {
                for (int port : new int[] {service.businessPort(), service.healthPort()}) {
                    List<Answer> answers = attack.stalls() ? stalled.get(attack.name() + port).get()
                                                           : send(port, attack);
                    String where = attack.name() + " on port " + port + ": " + answers;
                    for (Answer answer : answers) {
                        // 501 is right for a transfer coding the server does not implement (RFC 9112 section 6.1).
                        assertThat(where, answer.status(), not(is(500)));
                    }
                    if (attack.answer() != 0 && port == service.businessPort()) {
                        assertThat(where, answers.isEmpty() ? -1 : answers.getFirst().status(), is(attack.answer()));
                    }
                    if (attack.readsTheBody() && port == service.businessPort()) {
                        assertThat(where, answers.isEmpty(), is(false));
                        assertThat(where, answers.getFirst().status(), is(400));
                        assertThat(where, answers.getFirst().headers().get("connection"), is("close"));
                        assertThat(where, answers.getFirst().headers().get("content-type"),
                                   is("application/problem+json"));
                    }
                }
            }
            background.shutdown();
            service.signal("TERM");
            assertThat(service.awaitExit(Duration.ofSeconds(60)), is(0));
            output = service.output();
        }
        assertThat("the service logged something", output.size() > 5, is(true));
        if (setting.contains("ALL")) {
            assertThat("Helidon's debug lines are in the log", output.stream()
                    .anyMatch(line -> line.matches(".* (DEBUG|TRACE) \\[[0-9a-f]*] io\\.helidon\\.webserver\\..*")), is(true));
        }
        assertThat(cardDataIn(output), is(empty()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"text", "json"})
    void aCardNumberThatReachesALogRecordIsMasked(String format) throws Exception {
        // The Redis key prefix is logged when Redis cannot be reached: the one place where configuration reaches a
        // log record, used here to put a card number into one.
        try (ServiceProcess service = ServiceProcess.start(Map.of(
                "logging.format", format,
                "idempotency.store", "redis",
                "idempotency.redis.uri", "redis://127.0.0.1:1",
                "idempotency.redis.key-prefix", "pan-4111-1111-1111-1111:",
                // Required behind Redis; unreachable as well (logged and retried, the service starts unready).
                "database.url", "jdbc:postgresql://127.0.0.1:1/payments",
                "idempotency.fingerprint-secret", "a-test-secret-of-enough-length"))) {
            String line = service.awaitLine(text -> text.contains("Redis not reachable"), Duration.ofSeconds(30));
            assertThat(line.contains("pan-****-****-****-1111:"), is(true));
            assertThat(cardDataIn(service.output()), is(empty()));
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "server.port                      | 4111111111111111    | ************1111",
            "health.circuit-breaker.threshold | 4111111111111111    | ************1111",
            "server.port                      | 4111.1111.1111.1111 | ****.****.****.1111",
            "server.port                      | 4111,1111,1111,1111 | ****,****,****,1111",
            "server.port                      | 4111_1111_1111_1111 | ****_****_****_1111",
            "server.port                      | 4111+1111+1111+1111 | ****+****+****+1111",
            "server.port                      | 4111/1111/1111/1111 | ****/****/****/1111",
    })
    void aCardNumberInAConfigurationErrorIsMaskedOnTheConsole(String key, String value, String masked)
            throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(key, value), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("'" + masked + "'")), is(true));
        assertThat(cardDataIn(exited.output()), is(empty()));
    }

    // Every line holding a Luhn-valid 13-19 digit sequence (digits apart by at most one space or dash; inside a longer
    // run, any window), a corpus card number with its separators removed (one or two of Zs, Pd, Cf, . _ / + , between
    // two digits), or a corpus CVC as a token of its own.
    private static List<String> cardDataIn(List<String> lines) {
        List<String> found = new ArrayList<>();
        Pattern run = Pattern.compile("\\d(?:[ -]?\\d)*");
        for (String line : lines) {
            Matcher matcher = run.matcher(line);
            while (matcher.find()) {
                String digits = matcher.group().replaceAll("[ -]", "");
                if (luhnValidWindow(digits)) {
                    found.add(line);
                }
            }
            String joined = line.replaceAll("(?<=\\d)[\\p{Zs}\\p{Pd}\\p{Cf}._/+,]{1,2}(?=\\d)", "");
            for (String pan : PANS) {
                if (joined.contains(pan)) {
                    found.add(line);
                }
            }
            for (String cvc : CVCS) {
                if (Pattern.compile("(?<![0-9A-Za-z])" + cvc + "(?![0-9A-Za-z])").matcher(line).find()) {
                    found.add(line);
                }
            }
        }
        return found;
    }

    private static boolean luhnValidWindow(String digits) {
        if (digits.length() < 13) {
            return false;
        }
        if (digits.length() <= 19) {
            return CardNumbers.luhn(digits);
        }
        for (int length = 13; length <= 19; length++) {
            for (int start = 0; start + length <= digits.length(); start++) {
                if (CardNumbers.luhn(digits.substring(start, start + length))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<Attack> corpus() {
        List<Attack> attacks = new ArrayList<>();
        String body = body(PANS.get(0), CVCS.get(0), "order-1");
        String hex = Integer.toHexString(Bytes.utf8(body).length);
        // Broken chunked framing on the route that reads the body: 400, Connection: close, nothing logged.
        attacks.add(chunked("chunk size not hex", "zz\r\n" + body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("the body as chunk-size line", body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("chunk extension", hex + ";cvc=" + CVCS.get(1) + "\r\n" + body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("chunk extension holding a card number", hex + ";pan=" + PANS.get(1) + "\r\n" + body
                                                                      + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("negative chunk size", "-5\r\n" + body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("chunk size overflowing an int", "fffffffff\r\n" + body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("chunk shorter than its size", "5\r\n" + body + "\r\n0\r\n\r\n", true));
        attacks.add(chunked("body after the last chunk", hex + "\r\n" + body + "\r\n0\r\n" + body + "\r\n\r\n", true));
        attacks.add(chunked("trailer holding card data", hex + "\r\n" + body + "\r\n0\r\nX-Card: " + PANS.get(2)
                                                         + " " + CVCS.get(2) + "\r\n\r\n", true));
        attacks.add(chunked("raw body under chunked, no framing at all", body, true));
        attacks.add(chunked("raw body under chunked, then end of stream", body + "\r\n", true));
        attacks.add(raw("body shorter than Content-Length", post("application/json", "Content-Length: 4000\r\n")
                                                             + body, true));
        attacks.add(raw("chunked with Expect: 100-continue", post("application/json",
                "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n") + "zz\r\n" + body + "\r\n0\r\n\r\n", true));
        // Framing Helidon refuses before routing.
        attacks.add(raw("chunked and Content-Length", post("application/json", "Transfer-Encoding: chunked\r\n"
                + "Content-Length: 10\r\n") + "zz\r\n" + body + "\r\n0\r\n\r\n", false));
        attacks.add(raw("unsupported transfer coding", post("application/json",
                "Transfer-Encoding: gzip, chunked\r\n") + "zz\r\n" + body + "\r\n0\r\n\r\n", false));
        attacks.add(raw("Content-Length not a number", post("application/json", "Content-Length: " + PANS.get(3)
                                                                                + "x\r\n") + body, false));
        attacks.add(raw("gzip that is not gzip", post("application/json", "Content-Encoding: gzip\r\nContent-Length: "
                + Bytes.utf8(body).length + "\r\n") + body, false));
        // Bodies the route reads and refuses.
        attacks.add(json("malformed JSON quoting the card", "{\"card\":{\"number\":" + PANS.get(3) + "x,\"cvc\":"
                                                            + CVCS.get(3) + "x}}"));
        attacks.add(json("JSON with trailing content", body + body));
        attacks.add(json("card number and CVC in free text", body(PANS.get(0), CVCS.get(0),
                "4111 1111 1111 1111 cvc " + CVCS.get(1))));
        byte[] head = Bytes.utf8(post("application/json", "Content-Length: " + (Bytes.utf8(body).length + 1) + "\r\n"));
        attacks.add(new Attack("invalid UTF-8 next to card data", Bytes.concat(head, Bytes.utf8(body.replace(
                "order-1", "order-")), new byte[] {(byte) 0xff, '1'}), false, false, 0));
        attacks.add(raw("chunked with a text/plain body", post("text/plain", "Transfer-Encoding: chunked\r\n")
                                                          + "zz\r\n" + body + "\r\n0\r\n\r\n", false));
        // Card data in the request line and the headers.
        attacks.add(raw("card number in the path", "GET /v1/authorizations/" + PANS.get(4) + "?cvc=" + CVCS.get(0)
                                                   + " HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                                                   + "\r\n", false));
        attacks.add(raw("card number in an unknown path", "GET /" + PANS.get(1) + "/" + CVCS.get(1)
                                                          + " HTTP/1.1\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("card number in a broken escape", "GET /x/%zz" + PANS.get(2) + "?cvc=" + CVCS.get(2)
                                                          + " HTTP/1.1\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("card number in the query", "GET /ping?pan=" + PANS.get(3) + "&cvc=" + CVCS.get(3)
                                                    + "#" + PANS.get(0) + " HTTP/1.1\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("card number with spaces in the request line", "GET /ping?" + "4111 1111 1111 1111 "
                                                                       + CVCS.get(0) + " HTTP/1.1\r\nHost: x\r\n\r\n",
                        false));
        attacks.add(raw("card number as the method", PANS.get(1) + " /ping HTTP/1.1\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("card number in the protocol", "GET /ping HTTP/" + PANS.get(2) + "\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("card number in headers", "GET /ping HTTP/1.1\r\nHost: x\r\nX-Card: " + PANS.get(3)
                + "\r\nX-Cvc: " + CVCS.get(3) + "\r\nAuthorization: Basic " + PANS.get(4) + "\r\n\r\n", false));
        attacks.add(raw("card number as Idempotency-Key", post("application/json", "Idempotency-Key: " + PANS.get(0)
                + "\r\nContent-Length: " + Bytes.utf8(body).length + "\r\n") + body, false));
        attacks.add(raw("card number in a malformed header name", "GET /ping HTTP/1.1\r\nHost: x\r\nX Card "
                + PANS.get(1) + ": " + CVCS.get(1) + "\r\n\r\n", false));
        attacks.add(raw("card number in a header line without colon", "GET /ping HTTP/1.1\r\nHost: x\r\n"
                + PANS.get(2) + " " + CVCS.get(2) + "\r\n\r\n", false));
        attacks.add(raw("card number in the Host header", "GET /ping HTTP/1.1\r\nHost: " + PANS.get(3) + ":"
                + CVCS.get(3) + "x\r\n\r\n", false));
        attacks.add(raw("card number in an over-long header", "GET /ping HTTP/1.1\r\nHost: x\r\nX-Pad: "
                + (PANS.get(4) + " " + CVCS.get(0) + " ").repeat(1500) + "\r\n\r\n", false));
        attacks.add(raw("card number in an over-long URI", "GET /ping?" + (PANS.get(0) + "&").repeat(1000)
                                                           + " HTTP/1.1\r\nHost: x\r\n\r\n", false));
        attacks.add(raw("HTTP/1.0 with card data", "GET /" + PANS.get(1) + " HTTP/1.0\r\nX-Cvc: " + CVCS.get(1)
                                                   + "\r\n\r\n", false));
        attacks.add(raw("a TLS hello with card data", "\u0016\u0003\u0001" + PANS.get(2) + CVCS.get(2), false));
        attacks.add(raw("a valid request, then garbage holding card data", "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
                + PANS.get(3) + " " + CVCS.get(3) + "\r\n\r\n", false));
        // Chunk data not followed by CRLF (request smuggling): 400, Connection: close, the rest never a request.
        attacks.add(chunked("chunk data followed by two arbitrary bytes", hex + "\r\n" + body + "XX0\r\n\r\nGET /"
                + PANS.get(0) + "?cvc=" + CVCS.get(0) + " HTTP/1.1\r\nHost: x\r\n\r\n", true));
        attacks.add(chunked("chunk data followed by a bare LF", "5\r\n" + body.substring(0, 5) + "\n" + hex + "\r\n"
                + body + "\r\n0\r\n\r\n", true));
        // The early answers of the HTTP edge, each with card data in every part Helidon may quote.
        attacks.addAll(earlyAnswers(body));
        return attacks;
    }

    private static List<Attack> earlyAnswers(String body) {
        String cardBody = "Content-Type: application/json\r\nContent-Length: " + Bytes.utf8(body).length + "\r\n";
        String cardHeaders = "Host: x\r\n" + TestCredentials.HEADER_LINE + "X-Card: " + PANS.get(1) + "\r\nX-Cvc: "
                             + CVCS.get(1) + "\r\n";
        return List.of(
                early("405 with card data in path, headers and body", "PUT /v1/authorizations/" + PANS.get(0) + "?cvc="
                        + CVCS.get(0) + " HTTP/1.1\r\n" + cardHeaders + cardBody + "\r\n" + body, 405),
                early("405 for POST /ping with card data", "POST /ping?" + PANS.get(2) + " HTTP/1.1\r\n"
                        + cardHeaders + cardBody + "\r\n" + body, 405),
                early("501 for an unknown method with card data", "CHARGE /v1/authorizations/" + PANS.get(3)
                        + " HTTP/1.1\r\n" + cardHeaders + cardBody + "\r\n" + body, 501),
                early("501 for a transfer coding with card data", post("application/json", "Transfer-Encoding: "
                        + PANS.get(4) + ", chunked\r\n") + Integer.toHexString(Bytes.utf8(body).length) + "\r\n"
                        + body + "\r\n0\r\n\r\n", 501),
                early("505 for HTTP/2.0 with card data", "GET /" + PANS.get(0) + " HTTP/2.0\r\n" + cardHeaders
                        + "\r\n", 505),
                early("505 for HTTP/3 with card data in the version", "GET /ping HTTP/3." + PANS.get(1) + "\r\n"
                        + cardHeaders + "\r\n", 505),
                early("414 with card data in an over-long path", "POST /" + (PANS.get(2) + "/" + CVCS.get(2) + "/")
                        .repeat(250) + " HTTP/1.1\r\n" + cardHeaders + cardBody + "\r\n" + body, 414),
                early("431 with card data in many headers", "POST /v1/authorizations HTTP/1.1\r\n"
                        + ("X-Card: " + PANS.get(3) + " " + CVCS.get(3) + "\r\n").repeat(800) + cardBody + "\r\n"
                        + body, 431),
                early("HEAD with card data in the path", "HEAD /v1/authorizations/" + PANS.get(4) + "-" + CVCS.get(0)
                        + " HTTP/1.1\r\n" + cardHeaders + "\r\n", 404),
                // Refused before any route, and the refusal is logged with its path: the path must be masked there.
                early("401 with card data in the path and no credentials", "GET /v1/authorizations/" + PANS.get(1)
                        + "-" + CVCS.get(1) + " HTTP/1.1\r\nHost: x\r\nX-Card: " + PANS.get(2) + "\r\n\r\n", 401),
                early("415 after Expect: 100-continue, then the card body it never asked for", "POST /v1/authorizations"
                        + " HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE
                        + "Content-Type: text/plain\r\nExpect: 100-continue\r\n"
                        + "Content-Length: " + Bytes.utf8(body).length + "\r\n\r\n" + body, 415),
                new Attack("header section that misses its deadline", Bytes.utf8("POST /v1/authorizations/"
                        + PANS.get(0) + " HTTP/1.1\r\n" + cardHeaders + "X-More: " + CVCS.get(2)), false, true, -1),
                new Attack("body that misses its deadline", Bytes.utf8(post("application/json", "Content-Length: "
                        + (Bytes.utf8(body).length + 100) + "\r\n") + body), false, true, -1));
    }

    private static String body(String pan, String cvc, String reference) {
        return "{\"merchantId\":\"m_1\",\"reference\":\"" + reference + "\",\"amount\":{\"value\":1299,"
               + "\"currency\":\"EUR\"},\"card\":{\"number\":\"" + pan + "\",\"expiryMonth\":12,\"expiryYear\":2030,"
               + "\"cvc\":\"" + cvc + "\"}}";
    }

    private static String post(String contentType, String headers) {
        return "POST /v1/authorizations HTTP/1.1\r\nHost: x\r\n" + TestCredentials.HEADER_LINE + "Content-Type: "
               + contentType + "\r\n"
               + (headers.contains("Idempotency-Key") ? "" : "Idempotency-Key: \"" + UUID.randomUUID() + "\"\r\n")
               + headers + "\r\n";
    }

    private static Attack chunked(String name, String afterHead, boolean readsTheBody) {
        return raw(name, post("application/json", "Transfer-Encoding: chunked\r\n") + afterHead, readsTheBody);
    }

    private static Attack json(String name, String body) {
        return raw(name, post("application/json", "Content-Length: " + Bytes.utf8(body).length + "\r\n") + body, false);
    }

    private static Attack raw(String name, String request, boolean readsTheBody) {
        return new Attack(name, request.getBytes(StandardCharsets.ISO_8859_1), readsTheBody, false, 0);
    }

    private static Attack early(String name, String request, int status) {
        return new Attack(name, request.getBytes(StandardCharsets.ISO_8859_1), false, false, status);
    }



    /**
     * One response read off the socket.
     *
     * @param status  status code
     * @param headers lower-case names, last value wins
     */
    private record Answer(int status, Map<String, String> headers) {
    }

    // Writes the bytes, shuts the output down (so the server sees the end of the stream instead of waiting for more;
    // unless the attack stalls, which waits for the server's deadline), and reads every response until the server
    // closes the connection.
    private static List<Answer> send(int port, Attack attack) throws IOException {
        byte[] received;
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(attack.stalls() ? 30_000 : 10_000);
            try {
                socket.getOutputStream().write(attack.bytes());
                if (!attack.stalls()) {
                    socket.shutdownOutput();
                }
            } catch (IOException e) {
                // The server may answer and close before it has read everything (a refused request head).
            }
            received = readToEnd(socket.getInputStream());
        }
        return answers(new String(received, StandardCharsets.ISO_8859_1));
    }

    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                out.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new IOException("the server neither answered nor closed in time; got: " + out, e);
        } catch (IOException e) {
            // a reset after the answer
        }
        return out.toByteArray();
    }

    private static List<Answer> answers(String text) {
        List<Answer> answers = new ArrayList<>();
        int at = 0;
        while (at < text.length() && text.startsWith("HTTP/1.1 ", at)) {
            int headEnd = text.indexOf("\r\n\r\n", at);
            if (headEnd < 0) {
                break;
            }
            String[] head = text.substring(at, headEnd).split("\r\n");
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < head.length; i++) {
                int colon = head[i].indexOf(':');
                headers.put(head[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), head[i].substring(colon + 1)
                        .trim());
            }
            int status = Integer.parseInt(head[0].split(" ")[1]);
            if (status >= 200) {
                answers.add(new Answer(status, headers));
            }
            at = headEnd + 4 + Integer.parseInt(headers.getOrDefault("content-length", "0"));
        }
        return answers;
    }
}
