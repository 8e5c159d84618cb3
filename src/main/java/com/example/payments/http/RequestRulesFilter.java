package com.example.payments.http;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.PathMatcher;
import io.helidon.http.PathMatchers;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * The request rules of a listener, checked before routing whatever the route, in this order: the request target,
 * the header fields, the method. The first two refuse what Helidon 4.5.0 accepts although HTTP does not; the third
 * answers the methods the listener does not serve (Helidon 4.5 answers them 404).
 * <ol>
 *     <li>A target Helidon would serve as some other target ({@link RequestTargets}): 400; a path with a {@code ;}:
 *     404.</li>
 *     <li>A field name that is not a token, the empty name ({@code : value}) included (RFC 9110 section 5.1,
 *     {@code field-name = token}; Helidon checks the characters of a name, not that there is one): 400 and the
 *     connection closed, since a header section that is not HTTP may be framed differently by a proxy in front.
 *     {@code Content-Type} sent more than once (RFC 9110 section 5.3: a field that is not a list appears once;
 *     which one applies is unknowable): 400. A {@code Content-Type} that is not a media type ({@code json}; RFC 9110
 *     section 8.3.1, {@code type "/" subtype *( OWS ";" OWS parameter )}): 415, as for any content type this service
 *     does not take (Helidon's parse of it would fail inside the route). An {@code Expect} with any expectation but
 *     {@code 100-continue} (RFC 9110 section 10.1.1: the server MAY answer 417, and this one does rather than ignore
 *     what the client asked for): 417.</li>
 *     <li>A method this service does not recognize ({@code FOO}): 501 (RFC 9110 section 9.1: "An origin server that
 *     receives a request method that is unrecognized or not implemented SHOULD respond with the 501 (Not
 *     Implemented) status code"), chosen over 405 because 405 claims the method is known. A known resource with a
 *     method it does not serve: 405 with {@code Allow} listing the methods it does serve (RFC 9110 section 15.5.6
 *     requires the header). Any other path with a method no resource of this listener serves: 404, so that no route
 *     registered by a library (such as the metrics observer's {@code OPTIONS}) answers a method the listener does not
 *     serve.</li>
 * </ol>
 * Each refusal is an RFC 9457 problem (naming the header where there is one), without a body for {@code HEAD}. Apart
 * from a bad field name, the connection is kept unless a body was left unread ({@link ConnectionCloseFilter}).
 */
public final class RequestRulesFilter implements Filter {

    private static final String TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
    // RFC 9110 section 5.6.4: DQUOTE *( qdtext / quoted-pair ) DQUOTE.
    private static final String QUOTED_STRING = "\"(?:[\\t \\x21\\x23-\\x5B\\x5D-\\x7E\\x80-\\xFF]"
                                                + "|\\\\[\\t \\x21-\\x7E\\x80-\\xFF])*\"";
    private static final Pattern MEDIA_TYPE = Pattern.compile(
            TOKEN + "/" + TOKEN + "(?:[ \\t]*;[ \\t]*(?:" + TOKEN + "=(?:" + TOKEN + "|" + QUOTED_STRING + "))?)*");
    private static final String CONTINUE = "100-continue";

    private final List<Resource> resources;
    private final Set<Method> served;

    private record Resource(PathMatcher path, Set<Method> methods, String allow) {
    }

    private RequestRulesFilter(Map<String, List<Method>> resources) {
        this.resources = resources.entrySet().stream()
                .map(e -> new Resource(PathMatchers.create(e.getKey()), Set.copyOf(e.getValue()),
                                       e.getValue().stream().map(Method::text).collect(Collectors.joining(", "))))
                .toList();
        this.served = resources.values().stream().flatMap(List::stream).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Creates the filter for one listener; register it after the request metrics, so that a refusal is counted.
     *
     * @param resources every path pattern the listener serves (e.g. {@code /v1/authorizations/{id}}) and its methods
     *                  in the order {@code Allow} lists them
     * @return the filter
     */
    public static RequestRulesFilter create(Map<String, List<Method>> resources) {
        return new RequestRulesFilter(new LinkedHashMap<>(resources));
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (targetRefused(req, res) || headerFieldRefused(req, res) || methodRefused(req, res)) {
            return;
        }
        chain.proceed();
    }

    private static boolean targetRefused(RoutingRequest req, RoutingResponse res) {
        Optional<Problem> problem = RequestTargets.problem(req.prologue(), req.headers());
        problem.ifPresent(refusal -> ProblemResponses.send(req, res, refusal));
        return problem.isPresent();
    }

    private static boolean headerFieldRefused(RoutingRequest req, RoutingResponse res) {
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
                return true;
            }
            if (!MEDIA_TYPE.matcher(contentType.get()).matches()) {
                ProblemResponses.send(req, res, ProblemResponses.unsupportedMediaType().withErrors(
                        List.of(Problem.FieldError.header("Content-Type", "not a media type (type/subtype)"))));
                return true;
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
                    return true;
                }
            }
        }
        return false;
    }

    private boolean methodRefused(RoutingRequest req, RoutingResponse res) {
        Method method = req.prologue().method();
        if (!StrictRequestReader.RECOGNIZED.contains(method.text())) {
            ProblemResponses.send(req, res, ProblemResponses.methodNotImplemented());
            return true;
        }
        for (Resource resource : resources) {
            if (resource.path().match(req.prologue().uriPath()).accepted()) {
                if (resource.methods().contains(method)) {
                    return false;
                }
                res.header(HeaderNames.ALLOW, resource.allow());
                ProblemResponses.send(req, res, ProblemResponses.methodNotAllowed(resource.allow()));
                return true;
            }
        }
        if (!served.contains(method)) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No such resource on this port."));
            return true;
        }
        return false;
    }
}
