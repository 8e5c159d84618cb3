package com.example.payments.http;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.PathMatcher;
import io.helidon.http.PathMatchers;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Answers requests whose method a listener does not serve before they reach routing (Helidon 4.5 answers them 404):
 * <ul>
 *     <li>a method this service does not recognize ({@code FOO}, {@code get}): 501 (RFC 9110 section 9.1: "An
 *     origin server that receives a request method that is unrecognized or not implemented SHOULD respond with the
 *     501 (Not Implemented) status code"), chosen over 405 because 405 claims the method is known;</li>
 *     <li>a known resource with a method it does not serve: 405 with {@code Allow} listing the methods it does
 *     serve (RFC 9110 section 15.5.6 requires the header);</li>
 *     <li>any other path with a method no resource of this listener serves: 404, so that no route registered by a
 *     library (such as the metrics observer's {@code OPTIONS}) answers a method the listener does not serve.</li>
 * </ul>
 * Every answer is an RFC 9457 problem, without a body for {@code HEAD}.
 */
public final class AllowedMethodsFilter implements Filter {

    // The methods of RFC 9110 section 9 and PATCH (RFC 5789); any other token is unrecognized.
    private static final Set<String> RECOGNIZED = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
                                                         "OPTIONS", "TRACE", "PATCH");

    private final List<Resource> resources;
    private final Set<Method> served;

    private record Resource(PathMatcher path, Set<Method> methods, String allow) {
    }

    private AllowedMethodsFilter(Map<String, List<Method>> resources) {
        this.resources = resources.entrySet().stream()
                .map(e -> new Resource(PathMatchers.create(e.getKey()), Set.copyOf(e.getValue()),
                                       e.getValue().stream().map(Method::text).collect(Collectors.joining(", "))))
                .toList();
        this.served = resources.values().stream().flatMap(List::stream).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Creates the filter for one listener.
     *
     * @param resources every path pattern the listener serves (e.g. {@code /v1/authorizations/{id}}) and its methods
     *                  in the order {@code Allow} lists them
     * @return the filter
     */
    public static AllowedMethodsFilter create(Map<String, List<Method>> resources) {
        return new AllowedMethodsFilter(new LinkedHashMap<>(resources));
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        Method method = req.prologue().method();
        if (!RECOGNIZED.contains(method.text())) {
            ProblemResponses.send(req, res, ProblemResponses.methodNotImplemented());
            return;
        }
        for (Resource resource : resources) {
            if (resource.path().match(req.prologue().uriPath()).accepted()) {
                if (resource.methods().contains(method)) {
                    chain.proceed();
                } else {
                    res.header(HeaderNames.ALLOW, resource.allow());
                    ProblemResponses.send(req, res, ProblemResponses.methodNotAllowed(resource.allow()));
                }
                return;
            }
        }
        if (!served.contains(method)) {
            ProblemResponses.send(req, res, ProblemResponses.notFound("No such resource on this port."));
            return;
        }
        chain.proceed();
    }
}
