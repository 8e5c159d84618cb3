package com.example.payments.http;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Refuses header fields Helidon 4.5.0 accepts although HTTP does not, before routing, on both listeners, whatever the
 * route:
 * <ul>
 *     <li>a field name that is not a token, the empty name ({@code : value}) included (RFC 9110 section 5.1,
 *     {@code field-name = token}; Helidon checks the characters of a name, not that there is one): 400 and the
 *     connection closed, since a header section that is not HTTP may be framed differently by a proxy in front;</li>
 *     <li>{@code Content-Type} sent more than once (RFC 9110 section 5.3: a field that is not a list appears once;
 *     which one applies is unknowable): 400;</li>
 *     <li>a {@code Content-Type} that is not a media type ({@code json}; RFC 9110 section 8.3.1,
 *     {@code type "/" subtype *( OWS ";" OWS parameter )}): 415, as for any content type this service does not take
 *     (Helidon's parse of it would fail inside the route);</li>
 *     <li>an {@code Expect} with any expectation but {@code 100-continue} (RFC 9110 section 10.1.1: the server MAY
 *     answer 417, and this one does rather than ignore what the client asked for): 417.</li>
 * </ul>
 * Each is an RFC 9457 problem naming the header. Apart from a bad field name, the connection is kept unless a body
 * was left unread ({@link ConnectionCloseFilter}).
 */
public final class HeaderFieldsFilter implements Filter {

    private static final String TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
    // RFC 9110 section 5.6.4: DQUOTE *( qdtext / quoted-pair ) DQUOTE.
    private static final String QUOTED_STRING = "\"(?:[\\t \\x21\\x23-\\x5B\\x5D-\\x7E\\x80-\\xFF]"
                                                + "|\\\\[\\t \\x21-\\x7E\\x80-\\xFF])*\"";
    private static final Pattern MEDIA_TYPE = Pattern.compile(
            TOKEN + "/" + TOKEN + "(?:[ \\t]*;[ \\t]*(?:" + TOKEN + "=(?:" + TOKEN + "|" + QUOTED_STRING + "))?)*");
    private static final String CONTINUE = "100-continue";

    private HeaderFieldsFilter() {
    }

    /**
     * Creates the filter; register it after the request metrics and before the method filter.
     *
     * @return the filter
     */
    public static HeaderFieldsFilter create() {
        return new HeaderFieldsFilter();
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        for (Header header : req.headers()) {
            if (!StrictRequestReader.isToken(header.name())) {
                throw ProblemResponses.sendAndClose(req, res, Problem.of("bad-request", "Bad request", 400,
                        "A header field name is not a token (RFC 9110 section 5.1)."));
            }
        }
        if (req.headers().contains(HeaderNames.CONTENT_TYPE)) {
            Header contentType = req.headers().get(HeaderNames.CONTENT_TYPE);
            if (contentType.valueCount() > 1) {
                ProblemResponses.send(req, res, Problem.of("bad-request", "Bad request", 400,
                                "Content-Type is sent more than once.")
                        .withErrors(List.of(Problem.FieldError.header("Content-Type", "sent more than once"))));
                return;
            }
            if (!MEDIA_TYPE.matcher(contentType.get()).matches()) {
                ProblemResponses.send(req, res, ProblemResponses.unsupportedMediaType().withErrors(
                        List.of(Problem.FieldError.header("Content-Type", "not a media type (type/subtype)"))));
                return;
            }
        }
        if (req.headers().contains(HeaderNames.EXPECT)) {
            for (String expectation : req.headers().get(HeaderNames.EXPECT).allValues(true)) {
                String name = expectation.strip().toLowerCase(Locale.ROOT);
                if (!name.isEmpty() && !name.equals(CONTINUE)) {
                    ProblemResponses.send(req, res, Problem.of("http-417", "Expectation failed", 417,
                                    "This service meets no expectation but 100-continue.")
                            .withErrors(List.of(Problem.FieldError.header("Expect",
                                                                          "only 100-continue is supported"))));
                    return;
                }
            }
        }
        chain.proceed();
    }
}
