package com.example.payments;

import java.util.Map;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The loopback prober reaches the business listener where it really listens.
 */
class PingUriTest {

    @ParameterizedTest(name = "server.host={0} -> {1}")
    @CsvSource({"0.0.0.0,http://127.0.0.1:8080/ping", "::,http://127.0.0.1:8080/ping",
            "127.0.0.2,http://127.0.0.2:8080/ping", "10.1.2.3,http://10.1.2.3:8080/ping",
            "::1,http://[::1]:8080/ping"})
    void theProberTargetsTheBoundAddressOrLoopbackForAWildcard(String host, String uri) {
        Config config = Config.just(ConfigSources.create(Map.of("server.host", host)));
        assertThat(Listeners.pingUri(config, 8080).toString(), is(uri));
    }
}
