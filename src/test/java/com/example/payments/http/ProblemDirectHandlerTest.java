package com.example.payments.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

import com.example.payments.testing.LogCapture;

import io.helidon.http.DirectHandler;
import io.helidon.http.DirectHandler.EventType;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;
import io.helidon.webserver.http.DirectTransportRequest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The listeners set {@code error-handling.include-entity}, so Helidon hands the direct handler its own message, which
 * may quote request bytes (a chunk-size line that is a whole body, CVC included; a request line; a header). Whatever
 * the status and with the handler's logger at its finest level, that message reaches neither a log record nor the
 * response; only the 431 is recognized from it. (The request has no content type, so an over-size body is 415.)
 */
class ProblemDirectHandlerTest {

    private static final String QUOTED = "zz{\"card\":{\"number\":\"4111111111111111\",\"cvc\":\"7395\"}}";

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource({
            "INTERNAL_ERROR, 500, 500",
            "BAD_REQUEST, 400, 400",
            "BAD_REQUEST, 413, 415",
            "PAYLOAD_TOO_LARGE, 413, 415",
            "BAD_REQUEST, 414, 414",
            "BAD_REQUEST, 501, 501",
            "BAD_REQUEST, 505, 505",
            "OTHER, 404, 404",
            "OTHER, 405, 405",
            "OTHER, 503, 503",
            "FORBIDDEN, 403, 403",
            "HTTP_VERSION_NOT_SUPPORTED, 505, 505",
            "OTHER, 500, 500"})
    void helidonsMessageIsNeitherLoggedNorAnswered(EventType type, int status, int answered) {
        assertNotQuoted(type, status, "For input string: \"" + QUOTED + "\"", answered);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"Header size exceeded", "Header size exceeded, request quoted"})
    void anOverSizeHeaderSectionIs431WithoutQuotingIt(String message) {
        assertNotQuoted(EventType.BAD_REQUEST, 400, message + ": " + QUOTED, 431);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"get, method-not-implemented", "POST, http-501"})
    void a501ForAMethodInAnotherCaseIsAnUnrecognizedMethodAndAnyOtherKeepsHelidonsStatus(String method, String type) {
        DirectHandler.TransportResponse response = ProblemDirectHandler.create(16384).handle(
                DirectTransportRequest.create("HTTP/1.1", method, "/ping"), EventType.BAD_REQUEST,
                Status.NOT_IMPLEMENTED_501, ServerResponseHeaders.create(), "");
        assertThat(response.status().code(), is(501));
        assertThat(new String(response.entity().orElseThrow(), StandardCharsets.UTF_8),
                   containsString("/problems/" + type + "\""));
    }

    @ParameterizedTest(name = "routed: {0}")
    @CsvSource({"false", "true"})
    void onlyAnAnswerNoRoutingFilterSawIsReportedToBeCounted(boolean routed) {
        List<String> reported = new ArrayList<>();
        ServerResponseHeaders headers = ServerResponseHeaders.create();
        if (routed) {
            // RequestIds.filter() gave the request its id: the routing filters count the answer.
            headers.set(RequestIds.X_REQUEST_ID, RequestIds.fresh());
        }
        DirectHandler.TransportResponse response = ProblemDirectHandler.create(16384,
                (method, status, requestId) -> reported.add(method + " " + status + " " + requestId)).handle(
                DirectTransportRequest.create("", "", ""), EventType.BAD_REQUEST, Status.BAD_REQUEST_400, headers, "");
        String id = response.headers().first(RequestIds.X_REQUEST_ID).orElseThrow();
        assertThat(reported, is(routed ? List.of() : List.of(" 400 " + id)));
    }

    private static String withoutIds(String text) {
        return text.replaceAll("(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", "<id>");
    }

    private static void assertNotQuoted(EventType type, int status, String message, int answered) {
        Logger logger = Logger.getLogger(ProblemDirectHandler.class.getName());
        Level level = logger.getLevel();
        logger.setLevel(Level.ALL);
        DirectHandler.TransportResponse response;
        String logged;
        try (LogCapture logs = LogCapture.start()) {
            response = ProblemDirectHandler.create(16384).handle(
                    DirectTransportRequest.create("HTTP/1.1", "POST", "/v1/authorizations"), type,
                    Status.create(status), ServerResponseHeaders.create(), message);
            logged = logs.text();
        } finally {
            logger.setLevel(level);
        }
        String body = new String(response.entity().orElse(new byte[0]), StandardCharsets.UTF_8);
        assertThat(response.status().code(), is(answered));
        assertThat(body, containsString("\"status\":" + answered));
        // Without the random ids (32 hex digits: the request id, a trace id), which hold any four digits now and then.
        String loggedText = withoutIds(logged);
        String bodyText = withoutIds(body);
        for (String part : new String[] {QUOTED, "4111111111111111", "7395", "For input string"}) {
            assertThat(loggedText, not(containsString(part)));
            assertThat(bodyText, not(containsString(part)));
        }
    }
}
