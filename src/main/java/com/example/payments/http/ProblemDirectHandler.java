package com.example.payments.http;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;

/**
 * Answers the events Helidon handles before (or outside) routing on the business listener as RFC 9457 problems
 * instead of Helidon's plain-text bodies: an over-size body ({@code max-payload-size}, 413), load shedding
 * ({@code max-concurrent-requests}, 503 with {@code Retry-After}), an unparsable request (400) and an uncaught
 * exception (500, never with its message or stack trace).
 *
 * <p>Precedence: 415 before 413 on the business listener. Helidon rejects an over-size body before
 * routing, so this handler checks the content type of such a request itself and answers 415 when it is not JSON.
 *
 * <p>Where Helidon's status is not the one RFC 9110 / RFC 6585 asks for, it is corrected: a header section over the
 * listener's limit is 431 (Helidon: 400; recognized by Helidon's message, which reaches this handler because the
 * listeners set {@code error-handling.include-entity}), an HTTP major version other than 1 is 505 (Helidon: 400).
 * That message may quote request bytes (a request line, a header, a chunk-size line that is a whole body with its
 * CVC): it is read for the 431 only, and goes neither to the client nor to any log (docs/card-data.md).
 * A {@code HEAD} gets the headers of the problem, {@code Content-Length} included, and no body. Every answer carries
 * {@code X-Request-Id} and the same {@code requestId} in its body ({@link RequestIds}).
 *
 * <p>A 501 for a request line whose method differs from a recognized one only in case ({@link StrictRequestReader})
 * is the {@code method-not-implemented} problem, as for any unrecognized method.
 *
 * <p>An answer written for a request that never reached routing (a request line or header section that could not be
 * read, a body over the limit by its {@code Content-Length}, load shedding) passes no routing filter: the listener's
 * {@link Unrouted} is told of it, so that it is counted like every routed answer (request metrics, access log).
 */
public final class ProblemDirectHandler implements DirectHandler {

    private static final System.Logger LOGGER = System.getLogger(ProblemDirectHandler.class.getName());
    // Helidon's message when the header section exceeds max-headers-size (io.helidon.http.Http1HeadersParser).
    private static final String HEADER_SIZE_EXCEEDED = "Header size exceeded";
    // Helidon's messages (io.helidon.webserver.http1.Http1Connection) for a request body with a Content-Encoding it
    // does not decode: before routing, so before authentication, like an over-size body.
    private static final String UNSUPPORTED_ENCODING = "Unsupported content encoding";
    private static final String ENCODING_DISABLED = "Content-Encoding header present when content encoding is disabled";
    // The protocol Helidon read from a request line it refused, e.g. "GET / HTTP/2.0/"; group 1 is the major version.
    // The methods of RFC 9110 section 9 and PATCH (RFC 5789), exactly as sent: a 501 for one of them is about
    // something else (a transfer coding).
    private static final Set<String> RECOGNIZED = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
                                                         "OPTIONS", "TRACE", "PATCH");
    private static final Pattern HTTP_VERSION = Pattern.compile("HTTP/(\\d+)(?:\\.\\d+)?/?$");

    private final long maxPayloadBytes;
    private final boolean contentTypeBeforeSize;
    private final Unrouted unrouted;

    /** Told of each answer written for a request that never reached routing. */
    @FunctionalInterface
    public interface Unrouted {
        /**
         * One answer, written as soon as the request was found unreadable (its duration is not measured: 0 ms).
         *
         * @param method    the request's method as sent, {@code ""} when the request line could not be read
         * @param status    the status code answered
         * @param requestId the {@code X-Request-Id} answered
         */
        void answered(String method, int status, String requestId);
    }

    private ProblemDirectHandler(long maxPayloadBytes, boolean contentTypeBeforeSize, Unrouted unrouted) {
        this.maxPayloadBytes = maxPayloadBytes;
        this.contentTypeBeforeSize = contentTypeBeforeSize;
        this.unrouted = unrouted;
    }

    /**
     * Creates the handler of the business listener: an over-size body that is not JSON is 415.
     *
     * @param maxPayloadBytes the listener's {@code max-payload-size} in bytes, quoted in the 413 detail
     * @return the handler
     */
    public static ProblemDirectHandler create(long maxPayloadBytes) {
        return create(maxPayloadBytes, (method, status, requestId) -> { });
    }

    /**
     * Creates the handler of the business listener, telling {@code unrouted} of every answer written before routing.
     *
     * @param maxPayloadBytes the listener's {@code max-payload-size} in bytes, quoted in the 413 detail
     * @param unrouted        counts the answers no routing filter sees (request metrics, access log)
     * @return the handler
     */
    public static ProblemDirectHandler create(long maxPayloadBytes, Unrouted unrouted) {
        return new ProblemDirectHandler(maxPayloadBytes, true, unrouted);
    }

    /**
     * Creates the handler of a listener that takes no request body at all (the health listener): any body is 413.
     *
     * @return the handler
     */
    public static ProblemDirectHandler withoutBodies() {
        return new ProblemDirectHandler(0, false, (method, status, requestId) -> { });
    }

    @Override
    public TransportResponse handle(TransportRequest request, EventType eventType, Status defaultStatus,
                                    ServerResponseHeaders responseHeaders, String message) {
        // Helidon reports an over-size body as BAD_REQUEST with status 413, a missing route as OTHER with 404: the
        // status says what happened, the event type only where it came from.
        Problem problem = switch (defaultStatus.code()) {
        case 413 -> !contentTypeBeforeSize || isJson(request) ? ProblemResponses.payloadTooLarge(maxPayloadBytes)
                : ProblemResponses.unsupportedMediaType();
        case 400 -> badRequest(request, message);
        case 414 -> Problem.of("uri-too-long", "URI too long", 414,
                               "The request line is longer than this service accepts.");
        case 505 -> httpVersionNotSupported();
        case 501 -> RECOGNIZED.contains(request.method()) ? asHelidonChose(defaultStatus)
                : ProblemResponses.methodNotImplemented();
        case 404 -> ProblemResponses.notFound("No such resource on this port.");
        case 503 -> ProblemResponses.overloaded();
        case 500 -> internal(eventType);
        // Any other status Helidon chose (405, 431, 505 for HTTP/1.0, ...) keeps its code, as a problem.
        default -> asHelidonChose(defaultStatus);
        };
        // Mostly answered before routing, so before RequestIds.filter(): then the id is made here, by the same rule. An
        // exception out of a handler comes here after the filter: it keeps the id the filter gave, and the routing
        // filters count the answer.
        Optional<String> routedId = responseHeaders.first(RequestIds.X_REQUEST_ID).or(RequestIds::current);
        String requestId = routedId.orElseGet(() -> RequestIds.of(request.headers()));
        if (routedId.isEmpty()) {
            unrouted.answered(request.method(), problem.status(), requestId);
        }
        byte[] body = Json.bytes(problem.withRequestId(requestId));
        TransportResponse.Builder response = TransportResponse.builder()
                .status(ProblemResponses.status(problem))
                .headers(responseHeaders)
                .header(RequestIds.X_REQUEST_ID, requestId)
                .header(HeaderNames.CONTENT_TYPE, ProblemResponses.PROBLEM_JSON.text())
                .header(HeaderNames.CACHE_CONTROL, "no-store");
        if (Method.HEAD_NAME.equals(request.method())) {
            // The headers of the answer a GET would get, no body (RFC 9110 section 9.3.2).
            response.header(HeaderNames.CONTENT_LENGTH, String.valueOf(body.length));
        } else {
            response.entity(body);
        }
        if (problem.status() == 503) {
            response.header(HeaderNames.RETRY_AFTER, "1");
        }
        if (problem.status() == 415 && encodingRefused(request, message)) {
            // RFC 9110 section 12.5.3: the codings that would have been accepted, none but identity.
            response.header(HeaderNames.ACCEPT_ENCODING, "identity");
        }
        if (eventType.keepAlive()) {
            return response.build();
        }
        return response.header(HeaderValues.CONNECTION_CLOSE).keepAlive(false).build();
    }

    private static Problem badRequest(TransportRequest request, String message) {
        if (encodingRefused(request, message)) {
            return Problem.of("unsupported-content-encoding", "Unsupported content encoding", 415,
                              "Send the request body without a content coding (no Content-Encoding header).")
                    .withErrors(List.of(Problem.FieldError.header("Content-Encoding",
                                                                  "not accepted: send the body uncompressed")));
        }
        if (message != null && message.contains(HEADER_SIZE_EXCEEDED)) {
            return Problem.of("request-header-fields-too-large", "Request header fields too large", 431,
                              "The request's header section is larger than this service accepts.");
        }
        Matcher version = HTTP_VERSION.matcher(request.protocolVersion());
        if (version.find() && !version.group(1).equals("1")) {
            return httpVersionNotSupported();
        }
        return ProblemResponses.badRequest();
    }

    // A body with a Content-Encoding, which this service does not decode (RFC 9110 section 15.5.16: 415). The message
    // is only compared, never repeated.
    private static boolean encodingRefused(TransportRequest request, String message) {
        return message != null && request.headers().contains(HeaderNames.CONTENT_ENCODING)
               && (message.contains(UNSUPPORTED_ENCODING) || message.contains(ENCODING_DISABLED));
    }

    // A status kept as Helidon chose it, as a problem.
    private static Problem asHelidonChose(Status status) {
        return Problem.of("http-" + status.code(), status.reasonPhrase(), status.code(), status.reasonPhrase() + ".");
    }

    private static Problem httpVersionNotSupported() {
        return Problem.of("http-version-not-supported", "HTTP version not supported", 505,
                          "This service speaks HTTP/1.1 only.");
    }

    private static boolean isJson(TransportRequest request) {
        return Json.isUtf8Json(request.headers());
    }

    private static Problem internal(EventType eventType) {
        // Helidon's message may quote request bytes (a chunk-size line can be a whole body, CVC included): it goes
        // neither to the client nor to the log.
        LOGGER.log(Level.DEBUG, "Direct handler event {0} answered 500", eventType);
        return ProblemResponses.internalError();
    }
}
