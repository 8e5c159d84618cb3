package com.example.payments.http;

import java.lang.System.Logger.Level;

import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.http.Status;

/**
 * Answers the events Helidon handles before (or outside) routing on the business listener as RFC 9457 problems
 * instead of Helidon's plain-text bodies: an over-size body ({@code max-payload-size}, 413), load shedding
 * ({@code max-concurrent-requests}, 503 with {@code Retry-After}), an unparsable request (400) and an uncaught
 * exception (500, never with its message or stack trace).
 *
 * <p>Precedence (DESIGN §6): 415 before 413. Helidon rejects an over-size body before routing, so this handler checks
 * the content type of such a request itself and answers 415 when it is not JSON.
 */
public final class ProblemDirectHandler implements DirectHandler {

    private static final System.Logger LOGGER = System.getLogger(ProblemDirectHandler.class.getName());

    private final long maxPayloadBytes;

    private ProblemDirectHandler(long maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /**
     * Creates the handler.
     *
     * @param maxPayloadBytes the listener's {@code max-payload-size} in bytes, quoted in the 413 detail
     * @return the handler
     */
    public static ProblemDirectHandler create(long maxPayloadBytes) {
        return new ProblemDirectHandler(maxPayloadBytes);
    }

    @Override
    public TransportResponse handle(TransportRequest request, EventType eventType, Status defaultStatus,
                                    ServerResponseHeaders responseHeaders, String message) {
        // Helidon reports an over-size body as BAD_REQUEST with status 413, a missing route as OTHER with 404: the
        // status says what happened, the event type only where it came from.
        Problem problem = switch (defaultStatus.code()) {
        case 413 -> isJson(request) ? ProblemResponses.payloadTooLarge(maxPayloadBytes)
                : ProblemResponses.unsupportedMediaType();
        case 400 -> ProblemResponses.badRequest();
        case 404 -> ProblemResponses.notFound("No such resource on this port.");
        case 503 -> ProblemResponses.overloaded();
        case 500 -> internal(eventType);
        // Any other status Helidon chose (405, 431, 505 for HTTP/1.0, ...) keeps its code, as a problem.
        default -> Problem.of("http-" + defaultStatus.code(), defaultStatus.reasonPhrase(), defaultStatus.code(),
                              defaultStatus.reasonPhrase() + ".");
        };
        TransportResponse.Builder response = TransportResponse.builder()
                .status(Status.create(problem.status()))
                .headers(responseHeaders)
                .header(HeaderNames.CONTENT_TYPE, ProblemResponses.PROBLEM_JSON.text())
                .header(HeaderNames.CACHE_CONTROL, "no-store")
                .entity(Json.bytes(problem));
        if (problem.status() == 503) {
            response.header(HeaderNames.RETRY_AFTER, "1");
        }
        if (eventType.keepAlive()) {
            return response.build();
        }
        return response.header(HeaderValues.CONNECTION_CLOSE).keepAlive(false).build();
    }

    private static boolean isJson(TransportRequest request) {
        return request.headers().contentType()
                .map(type -> type.mediaType().type().equalsIgnoreCase("application")
                             && type.mediaType().subtype().equalsIgnoreCase("json"))
                .orElse(false);
    }

    private static Problem internal(EventType eventType) {
        // Helidon's message may quote request bytes (a chunk-size line can be a whole body, CVC included): it goes
        // neither to the client nor to the log.
        LOGGER.log(Level.DEBUG, "Direct handler event {0} answered 500", eventType);
        return ProblemResponses.internalError();
    }
}
