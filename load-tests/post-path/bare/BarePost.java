import java.nio.charset.StandardCharsets;

import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;

/**
 * The yardstick of load-tests/post-path/run.sh: the least a Helidon SE 4 application does for the product's POST.
 * {@code POST /v1/authorizations} reads the whole body and answers a fixed 201 JSON body with a {@code Location};
 * {@code GET /ping} answers {@code pong}. Same Helidon version, same JVM, same listener defaults as the service; no
 * filters, no metrics, no features. Prints {@code bare POST app on port N} once it listens.
 *
 * <p>Usage: {@code java -cp 'classes:target/libs/*' BarePost [port]} (0, the default, picks a free port).
 */
public final class BarePost {

    private static final byte[] CREATED = ("{\"id\":\"0a1b2c3d-0000-8000-8000-000000000000\",\"status\":\"APPROVED\","
            + "\"merchantId\":\"m_123\",\"reference\":\"bench\",\"amount\":{\"value\":1299,\"currency\":\"EUR\"},"
            + "\"card\":{\"brand\":\"visa\",\"last4\":\"1111\"},\"createdAt\":\"2026-01-01T00:00:00.000Z\"}")
            .getBytes(StandardCharsets.UTF_8);

    private BarePost() {
    }

    public static void main(String[] args) {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        WebServer server = WebServer.builder()
                .host("127.0.0.1")
                .port(port)
                .shutdownHook(true)
                .featuresDiscoverServices(false)
                .routing(routing -> routing
                        .post("/v1/authorizations", (req, res) -> {
                            byte[] body = req.content().as(byte[].class);
                            res.status(body.length > 0 ? Status.CREATED_201 : Status.BAD_REQUEST_400)
                                    .header(HeaderNames.LOCATION, "/v1/authorizations/0a1b2c3d-0000-8000-8000-000000000000")
                                    .header(HeaderValues.CONTENT_TYPE_JSON)
                                    .send(CREATED);
                        })
                        .get("/ping", (req, res) -> res.send("pong")))
                .build()
                .start();
        System.out.println("bare POST app on port " + server.port());
    }
}
