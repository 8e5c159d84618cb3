package com.example.payments.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Pattern;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The business API's contract, {@code src/main/resources/META-INF/openapi.yaml}, checked against every response the
 * tests receive from a business listener: through {@link Http}'s shared client and {@link RawHttp#exchange}, from
 * every service started by {@code TestService} or {@link ServiceProcess}.
 *
 * <p>Which responses are the product's is decided by the listener, not by a port number alone: each service
 * registers its business listener with a test of whether that listener is still serving (the in-process
 * {@code WebServer} is running; the child process is alive and its drain has not closed the port), and closes the
 * registration on every stop path. A response from a port whose registered listener stopped is not checked and the
 * stale registration is dropped, so a server that later gets the same free port (the issuer simulator, say) is never
 * checked against this document.
 *
 * <p>A response fails the contract when its operation (method and path template) is not in the document, or its
 * status is not documented for it, or a required header of that response is missing, or its content type is not
 * documented, or its body does not validate against the response's schema (JSON Schema 2020-12, with the
 * networknt validator). A path the document does not have must be answered with a problem. So the document cannot
 * drift from what the service answers.
 */
public final class OpenApiContract {

    /** Where the document is, on the classpath. */
    public static final String DOCUMENT = "META-INF/openapi.yaml";

    private static final Map<Integer, Registration> BUSINESS_LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicLong CHECKED = new AtomicLong();
    private static final JsonNode ROOT = load();
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
    private static final Map<String, Schema> BY_POINTER = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();

    private OpenApiContract() {
    }

    /**
     * One business listener whose responses are checked, until it is closed or stops serving.
     */
    public static final class Registration implements AutoCloseable {

        private final int port;
        private final BooleanSupplier serving;

        private Registration(int port, BooleanSupplier serving) {
            this.port = port;
            this.serving = serving;
        }

        /** Stops checking this listener's responses (idempotent; a newer listener on the port stays registered). */
        @Override
        public void close() {
            BUSINESS_LISTENERS.remove(port, this);
        }
    }

    /**
     * Registers a business listener: responses from its port are checked while {@code serving} says so.
     *
     * @param port    the port it listens on
     * @param serving whether this very listener still holds the port (e.g. {@code server::isRunning})
     * @return the registration, to close on every path that stops the listener
     */
    public static Registration businessListener(int port, BooleanSupplier serving) {
        Registration registration = new Registration(port, serving);
        BUSINESS_LISTENERS.put(port, registration);
        return registration;
    }

    /**
     * Whether responses from this port are checked now.
     *
     * @param port a port
     * @return {@code true} while a registered business listener that still serves holds it
     */
    static boolean checks(int port) {
        Registration registration = BUSINESS_LISTENERS.get(port);
        if (registration == null) {
            return false;
        }
        if (!registration.serving.getAsBoolean()) {
            registration.close();
            return false;
        }
        return true;
    }

    /**
     * How many responses were checked so far in this JVM.
     *
     * @return count
     */
    public static long checked() {
        return CHECKED.get();
    }

    /**
     * Checks one response when it came from a business listener.
     *
     * @param method  request method
     * @param port    the port the request went to (it tells the listener)
     * @param rawPath the request path, without the query
     * @param status  response status
     * @param header  response header by name (any case), empty when absent
     * @param body    response body, {@code null} when not read
     * @throws AssertionError naming every way the response breaks the contract
     */
    public static void check(String method, int port, String rawPath, int status,
                             Function<String, Optional<String>> header, String body) {
        if (!checks(port)) {
            return;
        }
        List<String> failures = new ArrayList<>();
        String where = method + " " + rawPath + " -> " + status;
        JsonNode response = response(method, rawPath, status, failures);
        if (response != null) {
            JsonNode headers = response.path("headers");
            for (String name : headers.propertyNames()) {
                JsonNode spec = resolve(headers.get(name));
                if (spec.path("required").asBoolean(false) && header.apply(name).isEmpty()) {
                    failures.add("required header " + name + " missing");
                }
            }
            boolean hasBody = body != null && !body.isEmpty() && !method.equals("HEAD");
            if (hasBody) {
                String type = header.apply("Content-Type").map(value -> value.split(";")[0].trim()
                        .toLowerCase(Locale.ROOT)).orElse("");
                JsonNode content = response.path("content").get(type);
                if (content == null) {
                    failures.add("content type '" + type + "' not documented; documented: "
                                 + response.path("content").propertyNames());
                } else if (type.endsWith("json")) {
                    String pointer = pointerOf(content.path("schema"));
                    validate(pointer, body, failures);
                    header.apply("X-Request-Id").ifPresent(id -> {
                        if (type.equals("application/problem+json")
                            && !id.equals(JSON.readTree(body).path("requestId").stringValue(""))) {
                            failures.add("requestId differs from X-Request-Id " + id);
                        }
                    });
                }
            }
        }
        CHECKED.incrementAndGet();
        if (!failures.isEmpty()) {
            throw new AssertionError("Response breaks " + DOCUMENT + ": " + where + ": " + failures + "\n" + body);
        }
    }

    private static JsonNode response(String method, String rawPath, int status, List<String> failures) {
        String path = rawPath == null || rawPath.isEmpty() ? "/" : rawPath;
        JsonNode paths = ROOT.path("paths");
        for (String template : paths.propertyNames()) {
            if (!matches(template, path)) {
                continue;
            }
            JsonNode operation = paths.get(template).get(method.toLowerCase(Locale.ROOT));
            if (operation == null) {
                // A method the path does not serve: 405 or 501, a problem.
                return problemResponse(status, List.of(405, 501, 400, 413, 414, 431, 505), method + " " + template,
                                       failures);
            }
            JsonNode response = operation.path("responses").get(String.valueOf(status));
            if (response == null) {
                failures.add("status " + status + " not documented for " + method + " " + template
                             + "; documented: " + operation.path("responses").propertyNames());
                return null;
            }
            return resolve(response);
        }
        // Deny by default: an unknown path is 401 without credentials, 404 with them (or refused before routing).
        return problemResponse(status, List.of(401, 404, 400, 405, 413, 414, 431, 501, 503, 505),
                               "an undocumented path", failures);
    }

    // What a path or method outside the document gets: a problem, as the NotFound response describes it.
    private static JsonNode problemResponse(int status, List<Integer> allowed, String what, List<String> failures) {
        if (!allowed.contains(status)) {
            failures.add(what + " answered " + status + "; allowed: " + allowed);
        }
        return resolve(ROOT.at("/components/responses/NotFound"));
    }

    private static boolean matches(String template, String path) {
        String regex = Pattern.quote(template).replaceAll("\\{[^}]+}", "\\\\E[^/]+\\\\Q");
        return Pattern.matches(regex, path);
    }

    private static JsonNode resolve(JsonNode node) {
        JsonNode ref = node.get("$ref");
        return ref == null ? node : resolve(ROOT.at(ref.stringValue().substring(1)));
    }

    private static String pointerOf(JsonNode schema) {
        JsonNode ref = schema.get("$ref");
        if (ref == null) {
            throw new IllegalStateException("inline response schemas are not checked: use a $ref to a component");
        }
        return ref.stringValue();
    }

    private static void validate(String pointer, String body, List<String> failures) {
        JsonNode instance;
        try {
            instance = JSON.readTree(body);
        } catch (RuntimeException e) {
            failures.add("body is not JSON: " + e.getMessage());
            return;
        }
        Schema schema = BY_POINTER.computeIfAbsent(pointer,
                key -> SCHEMAS.getSchema(SchemaLocation.of("classpath:" + DOCUMENT + key)));
        for (Error error : schema.validate(instance)) {
            failures.add(error.toString());
        }
    }

    private static JsonNode load() {
        try (InputStream in = OpenApiContract.class.getClassLoader().getResourceAsStream(DOCUMENT)) {
            if (in == null) {
                throw new IllegalStateException(DOCUMENT + " not on the classpath");
            }
            return new YAMLMapper().readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
