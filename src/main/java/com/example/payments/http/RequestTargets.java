package com.example.payments.http;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.helidon.http.HeaderNames;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.http.Method;

/**
 * Which request targets are refused: those Helidon 4.5.0 would serve as some other target ({@link RequestRulesFilter}
 * answers them before routing, on both listeners). Helidon routes on {@code java.net.URI}'s normalized path of whatever the request line says: an absolute-form target
 * of any scheme and authority ({@code ftp://evil.example/ping}) is served as {@code /ping}, {@code //ping} as
 * {@code /ping}, dot segments are resolved ({@code /v1/authorizations/../../ping} is {@code /ping}), {@code ;}
 * parameters are stripped ({@code /ping;x=1} is {@code /ping}), and {@code %2F} becomes a path separator. A proxy in
 * front that routes, authorizes or logs by the target it sees would disagree with what runs here.
 *
 * <p>The rules:
 * <ul>
 *     <li>The target is origin-form ({@code /path}, RFC 9112 section 3.2.1), or {@code *} for {@code OPTIONS}
 *     (section 3.2.4), or absolute-form (section 3.2.2) with scheme {@code http} (the only one served on this
 *     port) and an authority that names this request's {@code Host} (RFC 9112 section 3.2: the client sends
 *     {@code Host} identical to the target's authority): a host that is not empty (RFC 9110 section 4.2.1: an
 *     {@code http} URI with an empty host is invalid), no userinfo (section 4.2.4: a recipient treats it as an
 *     error), a port from 0 to 65535 (80 when absent, RFC 3986 section 6.2.3). Otherwise 400.</li>
 *     <li>The path has no empty segment but the last ({@code //ping}), no dot segment ({@code .}, {@code ..}; RFC 3986
 *     section 5.2.4 removes them only while resolving a reference, a request target has none), no {@code %2F}
 *     (RFC 3986 section 2.2: a percent-encoded reserved character is not the character itself), and only well-formed
 *     percent-encodings (section 2.1). Percent-encoded unreserved characters are the characters themselves (section
 *     6.2.2.2): {@code /%70ing} is {@code /ping} and {@code /%2E%2E/} is a dot segment. Otherwise 400.</li>
 *     <li>A path with a {@code ;} names no resource of this service (none has parameters): 404.</li>
 *     <li>A fragment ({@code #}) is not part of any request target form: 400.</li>
 *     <li>A {@code Host} that is not a host with an optional port from 0 to 65535, whatever the target's form: 400
 *     (Helidon checks its syntax, not the port's range).</li>
 * </ul>
 * The connection is kept (the request's framing is intact), unless a body was left unread
 * ({@link ConnectionCloseFilter}).
 */
final class RequestTargets {

    // scheme "://" authority [ path-abempty ], RFC 3986 section 3.
    private static final Pattern ABSOLUTE_FORM = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(/.*)?");
    // host [ ":" port ]: an IP literal in brackets, or a reg-name / IPv4 address.
    private static final Pattern AUTHORITY = Pattern.compile("(\\[[0-9A-Fa-f:.]+]|[^:\\[\\]]*)(?::([0-9]*))?");
    private static final String UNRESERVED_SYMBOLS = "-._~";

    private RequestTargets() {
    }

    /**
     * The problem a request's target is answered with.
     *
     * @param prologue the request line
     * @param headers  the request's header fields ({@code Host})
     * @return a 400 or a 404, or empty when the target is served
     */
    static Optional<Problem> problem(HttpPrologue prologue, Headers headers) {
        String target = prologue.uriPath().rawPath();
        Optional<String> refusal = refusal(target, prologue.method(), headers.first(HeaderNames.HOST).orElse(""));
        if (prologue.fragment().hasValue()) {
            refusal = Optional.of("A request target has no fragment ('#').");
        }
        if (refusal.isPresent()) {
            return Optional.of(Problem.of("bad-request", "Bad request", 400, refusal.get()));
        }
        if (target.indexOf(';') >= 0) {
            return Optional.of(ProblemResponses.notFound("No such resource on this port."));
        }
        return Optional.empty();
    }

    /**
     * Why a request target is refused.
     *
     * @param target the target without its query, as sent
     * @param method the request method
     * @param host   the {@code Host} header
     * @return the problem detail, or empty when the target is served
     */
    static Optional<String> refusal(String target, Method method, String host) {
        // Whatever the target's form: the same authority is judged alike in Host and in an absolute-form target.
        if (!host.isEmpty() && origin(host).isEmpty()) {
            return Optional.of("The Host header needs a host and a port from 0 to 65535.");
        }
        if (target.startsWith("/")) {
            return pathRefusal(target);
        }
        if (target.equals("*") && method.equals(Method.OPTIONS)) {
            return Optional.empty();
        }
        Matcher absolute = ABSOLUTE_FORM.matcher(target);
        if (!absolute.matches()) {
            return Optional.of("The request target is neither an absolute path nor an absolute http URI.");
        }
        if (!absolute.group(1).equalsIgnoreCase("http")) {
            return Optional.of("An absolute request target must have the scheme http.");
        }
        String authority = absolute.group(2);
        if (authority.contains("@")) {
            return Optional.of("An absolute request target must not have userinfo ('@').");
        }
        Optional<String> origin = origin(authority);
        if (origin.isEmpty()) {
            return Optional.of("The request target's authority needs a host and a port from 0 to 65535.");
        }
        if (!origin.equals(origin(host))) {
            return Optional.of("The request target's authority must be the Host header's.");
        }
        return absolute.group(3) == null ? Optional.empty() : pathRefusal(absolute.group(3));
    }

    // host:port in lower case with the default port, or empty when the authority is not valid.
    private static Optional<String> origin(String authority) {
        Matcher parts = AUTHORITY.matcher(authority);
        if (!parts.matches() || parts.group(1).isEmpty()) {
            return Optional.empty();
        }
        String port = parts.group(2) == null || parts.group(2).isEmpty() ? "80" : parts.group(2);
        if (port.length() > 5 || Integer.parseInt(port) > 65535) {
            return Optional.empty();
        }
        return Optional.of(parts.group(1).toLowerCase(Locale.ROOT) + ":" + Integer.parseInt(port));
    }

    private static Optional<String> pathRefusal(String path) {
        StringBuilder decoded = new StringBuilder(path.length());
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c != '%') {
                decoded.append(c);
                continue;
            }
            int value = i + 2 < path.length() ? hex(path.charAt(i + 1)) * 16 + hex(path.charAt(i + 2)) : -1;
            if (value < 0) {
                return Optional.of("The request target has a '%' that is not followed by two hex digits.");
            }
            if (value == '/') {
                return Optional.of("The request target's path has an encoded '/' (%2F).");
            }
            if (unreserved(value)) {
                decoded.append((char) value);
            } else {
                decoded.append(path, i, i + 3);
            }
            i += 2;
        }
        String[] segments = decoded.toString().split("/", -1);
        for (int i = 1; i < segments.length; i++) {
            if (segments[i].isEmpty() && i < segments.length - 1) {
                return Optional.of("The request target's path has an empty segment ('//').");
            }
            if (segments[i].equals(".") || segments[i].equals("..")) {
                return Optional.of("The request target's path has a dot segment ('.' or '..').");
            }
        }
        return Optional.empty();
    }

    private static boolean unreserved(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
               || UNRESERVED_SYMBOLS.indexOf(c) >= 0;
    }

    // A hex digit's value; a large negative value otherwise, so that any sum with it stays negative.
    private static int hex(char c) {
        int digit = Character.digit(c, 16);
        return c < 128 && digit >= 0 ? digit : -1000;
    }
}
