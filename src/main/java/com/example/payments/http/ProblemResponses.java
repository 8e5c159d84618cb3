package com.example.payments.http;

import java.util.List;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.HttpMediaType;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * Writes {@link Problem} bodies and the problems shared by several parts of the business listener.
 */
public final class ProblemResponses {

    /** {@code application/problem+json}, RFC 9457 section 3. */
    public static final HttpMediaType PROBLEM_JSON = HttpMediaType.create("application/problem+json");

    /** {@code Retry-After}, in seconds, sent with every 503 and 409 this service produces. */
    public static final HeaderName RETRY_AFTER = HeaderNames.RETRY_AFTER;

    private ProblemResponses() {
    }

    /**
     * Sends a problem as the whole response of a request that may be a {@code HEAD}: then the headers are those of
     * the {@code GET} answer, {@code Content-Length} included, and no body (RFC 9110 section 9.3.2).
     *
     * @param req     the request
     * @param res     response not yet sent
     * @param problem the body; its status becomes the response status
     */
    public static void send(ServerRequest req, ServerResponse res, Problem problem) {
        // The id RequestIds.filter() gave the request; a listener without that filter sends problems without one.
        Problem answered = res.headers().first(RequestIds.X_REQUEST_ID).map(problem::withRequestId).orElse(problem);
        res.status(status(problem))
                .header(HeaderNames.CONTENT_TYPE, PROBLEM_JSON.text())
                .header(HeaderNames.CACHE_CONTROL, "no-store");
        ResponseBodies.send(req, res, Json.bytes(answered));
    }

    /**
     * Sends a problem with {@code Connection: close} and returns the exception that makes Helidon close the connection
     * right after it (RFC 9112 section 9.6): for a request whose framing is broken, where the bytes that follow could
     * be read as another request. Use it as {@code throw ProblemResponses.sendAndClose(req, res, problem)}.
     *
     * @param req     the request
     * @param res     response not yet sent
     * @param problem the body
     * @return the exception to throw from the handler; its message is fixed and quotes nothing from the request
     */
    public static CloseConnectionException sendAndClose(ServerRequest req, ServerResponse res, Problem problem) {
        res.header(HeaderValues.CONNECTION_CLOSE);
        send(req, res, problem);
        return new CloseConnectionException("Request framing broken: answered " + problem.status() + " and closed");
    }

    /**
     * Sends a problem with a {@code Retry-After} header to a request that may be a {@code HEAD}.
     *
     * @param req               the request
     * @param res               response not yet sent
     * @param problem           the body
     * @param retryAfterSeconds seconds the client should wait, {@code >= 1}
     */
    public static void sendRetryable(ServerRequest req, ServerResponse res, Problem problem, long retryAfterSeconds) {
        res.header(RETRY_AFTER, String.valueOf(Math.max(1, retryAfterSeconds)));
        send(req, res, problem);
    }

    /**
     * The response status of a problem, with its reason phrase also where Helidon has no constant for the code (431).
     *
     * @param problem the problem
     * @return the status
     */
    static Status status(Problem problem) {
        Status known = Status.create(problem.status());
        String phrase = known.reasonPhrase();
        return phrase == null || phrase.isBlank() || phrase.equals(known.codeText())
                ? Status.create(problem.status(), problem.title()) : known;
    }

    /**
     * 503 while startup is not complete.
     *
     * @return the problem
     */
    public static Problem starting() {
        return Problem.of("starting", "Service starting", 503,
                          "The service has not finished starting; retry shortly.");
    }

    /**
     * 503 when {@code server.max-concurrent-requests} is reached (load shedding).
     *
     * @return the problem
     */
    public static Problem overloaded() {
        return Problem.of("overloaded", "Too many concurrent requests", 503,
                          "This instance is at its concurrent request limit; retry shortly.");
    }

    /**
     * 413 for a body over the listener's {@code max-payload-size}.
     *
     * @param maxBytes the limit in bytes
     * @return the problem
     */
    public static Problem payloadTooLarge(long maxBytes) {
        return Problem.of("payload-too-large", "Request body too large", 413, maxBytes == 0
                ? "This port accepts no request body." : "The request body exceeds " + maxBytes + " bytes.");
    }

    /**
     * 415 for a body that is not {@code application/json}, or is announced in a charset other than UTF-8.
     *
     * @return the problem
     */
    public static Problem unsupportedMediaType() {
        return Problem.of("unsupported-media-type", "Unsupported media type", 415,
                          "Send the request body as application/json in UTF-8 (no charset parameter, or "
                          + "charset=utf-8).");
    }

    /**
     * 404 for an unknown path or resource.
     *
     * @param detail what was not found
     * @return the problem
     */
    public static Problem notFound(String detail) {
        return Problem.of("not-found", "Not found", 404, detail);
    }

    /**
     * 500 for a bug. Deliberately says nothing about the cause: the log has it, the caller must not.
     *
     * @return the problem
     */
    public static Problem internalError() {
        return Problem.of("internal-error", "Internal error", 500,
                          "The request failed unexpectedly. Retry with the same Idempotency-Key.");
    }

    /**
     * 405 for a method the resource does not serve; the caller sets {@code Allow} (RFC 9110 section 15.5.6).
     *
     * @param allowed the methods it serves, e.g. {@code GET, HEAD}
     * @return the problem
     */
    public static Problem methodNotAllowed(String allowed) {
        return Problem.of("method-not-allowed", "Method not allowed", 405,
                          "This resource serves " + allowed + " only.");
    }

    /**
     * 501 for a request method this service does not recognize (RFC 9110 section 9.1 and 15.6.2).
     *
     * @return the problem
     */
    public static Problem methodNotImplemented() {
        return Problem.of("method-not-implemented", "Method not implemented", 501,
                          "This request method is not implemented by this service.");
    }

    /**
     * 400 for a request Helidon could not parse (bad request line or headers).
     *
     * @return the problem
     */
    public static Problem badRequest() {
        return Problem.of("bad-request", "Bad request", 400, "The HTTP request could not be parsed.");
    }

    /**
     * 400 for a request body that could not be read: broken chunked framing (a chunk size that is not hex, a chunk
     * extension, chunk data not followed by CRLF, a bad last chunk) or a body that ends early. Sent with
     * {@code Connection: close}.
     *
     * @return the problem
     */
    public static Problem unreadableBody() {
        return Problem.of("malformed-body", "Malformed request body", 400,
                          "The request body could not be read: its transfer coding is malformed (chunk extensions are "
                          + "not accepted; each chunk's data ends with CRLF). The connection is closed.")
                .withErrors(List.of(Problem.FieldError.body("#", "the body's framing is malformed")));
    }
}
