package com.example.payments.idempotency;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.example.payments.testing.Http;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCertificates;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

/**
 * Production's connection: {@code rediss://} (TLS, server certificate verified) with an ACL user whose password comes
 * from the environment ({@code IDEMPOTENCY_REDIS_URI}, as a Kubernetes Secret provides it), restricted to exactly the
 * commands and keys docs/idempotency.md lists.
 */
class RedisTlsIT {

    /** The ACL docs/idempotency.md documents for the service's Redis user (Redis 7.0 syntax), read from the doc. */
    static final List<String> ACL_RULES = documentedAcl();

    private static List<String> documentedAcl() {
        try {
            String line = java.nio.file.Files.readAllLines(java.nio.file.Path.of("docs/idempotency.md")).stream()
                    .filter(l -> l.startsWith("user payments-authorization on >PASSWORD ")).findFirst()
                    .orElseThrow(() -> new AssertionError("docs/idempotency.md documents no ACL line"));
            return List.of(line.substring("user payments-authorization ".length()).replace(">PASSWORD ", "")
                                   .split(" "));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aTlsConnectionWithAnAclUserFromTheEnvironmentServesAndNeverLogsThePassword() throws Exception {
        TestCertificates certificates = TestCertificates.create();
        String password = "pw-" + UUID.randomUUID();
        String[] users = userArgs(password);
        try (RedisServer redis = RedisServer.startTls(certificates, users);
                PostgresServer postgres = PostgresServer.start();
                ServiceProcess service = ServiceProcess.start(
                        Map.of("idempotency.store", "redis", "idempotency.fingerprint-secret", "it-test-fingerprint-secret",
                               "database.url", postgres.url(), "database.username", PostgresServer.USER,
                               "javax.net.ssl.trustStore", certificates.trustStore().toString(),
                               "javax.net.ssl.trustStorePassword", certificates.trustStorePassword(),
                               "javax.net.ssl.trustStoreType", "PKCS12"),
                        Map.of("IDEMPOTENCY_REDIS_URI",
                               "rediss://payments:" + password + "@127.0.0.1:" + redis.port()))) {
            service.awaitReady(Duration.ofSeconds(20));
            String key = UUID.randomUUID().toString();
            String url = "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations";

            HttpResponse<String> created = Http.post(url, key, Http.VALID_BODY);
            assertThat(created.body(), created.statusCode(), is(201));
            assertThat(Http.post(url, key, Http.VALID_BODY).headers().firstValue("Idempotent-Replayed").orElse(""),
                       is("true"));
            String location = created.headers().firstValue("Location").orElseThrow();
            assertThat(Http.get("http://127.0.0.1:" + service.businessPort() + location).statusCode(), is(200));

            service.signal("TERM");
            assertThat(service.awaitExit(Duration.ofSeconds(20)), is(0));
            assertThat(service.output().stream().filter(line -> line.contains(password)).toList(), is(empty()));
            assertThat(service.output().stream().filter(line -> line.contains("SEVERE")
                                                               || line.contains("did not finish")).toList(),
                       is(empty()));
        }
    }

    private static String[] userArgs(String password) {
        List<String> args = new java.util.ArrayList<>(List.of("--user", "default", "off", "--user", "payments"));
        args.addAll(ACL_RULES);
        args.add(">" + password);
        return args.toArray(String[]::new);
    }
}
