package com.example.payments.http;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An RFC 9457 problem details body ({@code application/problem+json}).
 *
 * <p>Never carries a stack trace, an exception message from a library, a card number or a CVC: every text here is
 * written by this service.
 *
 * @param type   URI identifying the problem type, e.g. {@code https://payments.example.com/problems/invalid-request}
 * @param title  short, human-readable summary of the problem type
 * @param status HTTP status code
 * @param detail explanation specific to this occurrence
 * @param errors    field errors (an RFC 9457 extension member), omitted when empty
 * @param requestId the request's id, also sent as {@code X-Request-Id} (an RFC 9457 extension member), set when the
 *                  problem is sent; omitted when {@code null}
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record Problem(String type, String title, int status, String detail, List<FieldError> errors,
                      String requestId) {

    /**
     * The most field errors a problem lists (20): a body with thousands of unknown members gets the first 20 and a
     * detail saying how many there were, not an answer many times the size of the request.
     */
    public static final int MAX_ERRORS = 20;

    /** Base URI of this service's problem types; forks replace it with their own documentation address. */
    public static final String TYPE_BASE = "https://payments.example.com/problems/";

    /**
     * One invalid field: in the JSON body ({@code pointer}, an RFC 6901 JSON Pointer in URI-fragment form such as
     * {@code #/card/number}) or in a request header ({@code header}, e.g. {@code Idempotency-Key}).
     *
     * @param pointer JSON pointer of the field in the request body, or {@code null}
     * @param header  name of the request header, or {@code null}
     * @param detail  what is wrong with it; never echoes the submitted value
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FieldError(String pointer, String header, String detail) {

        /**
         * A body field error.
         *
         * @param pointer e.g. {@code #/amount/value}
         * @param detail  what is wrong
         * @return the error
         */
        public static FieldError body(String pointer, String detail) {
            return new FieldError(pointer, null, detail);
        }

        /**
         * A header error.
         *
         * @param header e.g. {@code Idempotency-Key}
         * @param detail what is wrong
         * @return the error
         */
        public static FieldError header(String header, String detail) {
            return new FieldError(null, header, detail);
        }
    }

    /**
     * A problem without field errors.
     *
     * @param slug   last path segment of the type URI, e.g. {@code not-found}
     * @param title  summary
     * @param status HTTP status
     * @param detail this occurrence
     * @return the problem
     */
    public static Problem of(String slug, String title, int status, String detail) {
        return new Problem(TYPE_BASE + slug, title, status, detail, List.of(), null);
    }

    /**
     * The same problem with field errors: at most the first {@value #MAX_ERRORS}, and when there were more, the detail
     * ends with how many there were ({@code "... The first 20 of 1500 field errors are listed."}).
     *
     * @param fieldErrors the errors, in the order found
     * @return a copy
     */
    public Problem withErrors(List<FieldError> fieldErrors) {
        if (fieldErrors.size() <= MAX_ERRORS) {
            return new Problem(type, title, status, detail, List.copyOf(fieldErrors), requestId);
        }
        String counted = "The first " + MAX_ERRORS + " of " + fieldErrors.size() + " field errors are listed.";
        return new Problem(type, title, status, detail == null ? counted : detail + " " + counted,
                           List.copyOf(fieldErrors.subList(0, MAX_ERRORS)), requestId);
    }

    /**
     * The same problem with the id of the request it answers.
     *
     * @param id the request id ({@link RequestIds})
     * @return a copy
     */
    public Problem withRequestId(String id) {
        return new Problem(type, title, status, detail, errors, id);
    }
}
