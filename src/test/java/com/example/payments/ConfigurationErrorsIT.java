package com.example.payments;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The packaged service refuses a bad configuration: exit status 2 and one line naming the key and the range.
 */
class ConfigurationErrorsIT {

    @Test
    void anUnknownStoreStopsStartupWithOneLineNamingTheKey() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("idempotency.store", "memcached"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: idempotency.store: 'memcached' is not allowed; "
                                            + "allowed: in-memory | redis"));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception")), is(false));
    }

    @Test
    void anAuthorizerTimeoutAsLongAsTheDrainStopsStartup() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of("authorizer.timeout", "PT20S", "shutdown.drain-timeout", "PT20S",
                       "shutdown.hard-deadline", "PT40S"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.timeout: 'PT20S' is not allowed; "
                                            + "allowed: a duration > PT0S and < shutdown.drain-timeout (PT20S), so no "
                                            + "request outlives the drain"));
    }

    @Test
    void theHttpAuthorizerWithoutAnIssuerUriStopsStartupWithOneLineNamingTheKey() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of("authorizer.type", "http"), Map.of());
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.http.uri: missing; allowed: an "
                                            + "absolute http:// or https:// URI with a host and no query, e.g. "
                                            + "http://issuer.internal:8090, when authorizer.type is http"));
    }

    @Test
    void anUnknownAuthorizerTypeStopsStartup() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of("AUTHORIZER_TYPE", "soap"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: authorizer.type: 'soap' is not allowed; allowed: "
                                            + "rule-based | http"));
    }

    @Test
    void aConfigFileThatIsNotValidYamlStopsStartupWithOneLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, "server:\n  port: [oops\n");
        ServiceProcess.Exited exited = ServiceProcess.runToExit(Map.of(), Map.of("APP_CONFIG_FILE", file.toString()));
        assertThat(exited.status(), is(2));
        assertThat(exited.output().stream().filter(line -> line.startsWith("Invalid configuration: ")).count(), is(1L));
        assertThat(exited.output().stream().anyMatch(line -> line.contains("Exception") || line.startsWith("\tat ")),
                   is(false));
    }

    @Test
    void aPortInUseStopsStartupInsteadOfServingHalfTheListeners() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            ServiceProcess.Exited exited = ServiceProcess.runToExit(
                    Map.of("server.port", "0", "health-server.port", String.valueOf(taken.getLocalPort())), Map.of());
            assertThat(exited.status(), is(2));
            assertThat(exited.output(), hasItem("Invalid configuration: health-server.port: cannot listen on port "
                                                + taken.getLocalPort() + " (in use, or not permitted); allowed: a "
                                                + "free port from 0 to 65535"));
        }
    }

    @Test
    void environmentVariablesOverrideTheDefaults() throws Exception {
        ServiceProcess.Exited exited = ServiceProcess.runToExit(
                Map.of(), Map.of("HEALTH_CIRCUIT_BREAKER_THRESHOLD", "-5"));
        assertThat(exited.status(), is(2));
        assertThat(exited.output(), hasItem("Invalid configuration: health.circuit-breaker.threshold: '-5' is out of "
                                            + "range; allowed: an integer from 0 to 2147483647"));
        assertThat(exited.output(), not(hasItem("")));
    }
}
