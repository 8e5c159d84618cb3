package com.example.payments.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;


/**
 * A throw-away certificate authority and a server certificate for 127.0.0.1, made with {@code openssl}, plus a
 * PKCS12 trust store holding the CA for the service's JVM ({@code -Djavax.net.ssl.trustStore}).
 *
 * @param ca                 CA certificate (PEM)
 * @param certificate        server certificate for IP 127.0.0.1 and DNS localhost (PEM)
 * @param key                server private key (PEM)
 * @param trustStore         PKCS12 trust store with the CA
 * @param trustStorePassword its password
 */
public record TestCertificates(Path ca, Path certificate, Path key, Path trustStore, String trustStorePassword) {

    /**
     * Makes the files in a new temporary directory. Skips the calling test without {@code openssl} (fails under
     * {@code CI=true}).
     *
     * @return the files
     * @throws Exception when a tool fails
     */
    public static TestCertificates create() throws Exception {
        Tools.require("openssl", "apt-get install openssl");
        Path dir = Files.createTempDirectory("redis-tls-");
        Path ca = dir.resolve("ca.crt");
        Path caKey = dir.resolve("ca.key");
        Path certificate = dir.resolve("server.crt");
        Path key = dir.resolve("server.key");
        Path request = dir.resolve("server.csr");
        Path extensions = dir.resolve("san.cnf");
        Files.writeString(extensions, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey.toString(), "-out",
            ca.toString(), "-days", "2", "-subj", "/CN=payments-authorization-test-ca");
        run(dir, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out",
            request.toString(), "-subj", "/CN=127.0.0.1");
        run(dir, "openssl", "x509", "-req", "-in", request.toString(), "-CA", ca.toString(), "-CAkey",
            caKey.toString(), "-CAcreateserial", "-out", certificate.toString(), "-days", "2", "-extfile",
            extensions.toString());
        Path trustStore = dir.resolve("truststore.p12");
        String password = "changeit";
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(dir, keytool, "-importcert", "-noprompt", "-alias", "test-ca", "-file", ca.toString(), "-keystore",
            trustStore.toString(), "-storetype", "PKCS12", "-storepass", password);
        return new TestCertificates(ca, certificate, key, trustStore, password);
    }

    private static void run(Path dir, String... command) throws Exception {
        Process process = new ProcessBuilder(List.of(command)).directory(dir.toFile()).redirectErrorStream(true)
                .start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed:\n" + output);
        }
    }
}
