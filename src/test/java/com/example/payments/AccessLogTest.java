package com.example.payments;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import com.example.payments.config.ConfigurationException;
import com.example.payments.testing.Http;
import com.example.payments.testing.LogCapture;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The business listener's access log: one line per request with method, route template, status, duration, request id
 * and merchant as structured fields; never a card number, whether it came in the body, a header, the path or the query; off or sampled by
 * {@code access-log.*}.
 */
class AccessLogTest {

    private static final String PAN = "4111111111111111";
    private static final String TRACE_ID = "2af7651916cd43dd8448eb211c80319c";
    private static final Pattern LINE = Pattern.compile(
            "INFO com\\.example\\.payments\\.observability\\.AccessLog: "
            + "(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE|CONNECT|other) \\S+ \\d{3} event\\.duration=\\d+ "
            + "http\\.request\\.method=\\S+ http\\.response\\.status_code=\\d{3} http\\.route=\\S+ "
            + "merchant\\.id=\\S+ http\\.request\\.id=[0-9a-f]{32}");

    @Test
    void eachRequestGetsOneLineWithTheRouteTemplateAndNoCardData() throws Exception {
        try (TestService service = TestService.start(Map.of()); LogCapture logs = LogCapture.start()) {
            String api = service.business("/v1/authorizations");
            send(Http.request(api).header("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01")
                         .header("Content-Type", "application/json").header("Idempotency-Key", "access-1")
                         .header("X-Card", PAN)
                         .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY)));
            send(Http.request(api + "/" + PAN + "?card=" + PAN).GET());
            send(HttpRequest.newBuilder(URI.create(api + "/" + PAN)).header("X-Card", PAN).GET());
            send(Http.request(service.business("/" + PAN + "?cvc=123")).GET());
            send(Http.request(api).header("Content-Type", "application/json").header("Idempotency-Key", "access-2")
                         .POST(HttpRequest.BodyPublishers.ofString("{\"card\":{\"number\":\"" + PAN + "\"}")));

            List<String> lines = accessLines(logs, 5);
            assertThat(String.join("\n", lines), lines, hasSize(5));
            lines.forEach(line -> assertThat(line, LINE.matcher(line).find(), is(true)));
            assertThat(lines.get(0), containsString("AccessLog: POST /v1/authorizations 201 "));
            assertThat(lines.get(0), containsString("merchant.id=m_123 http.request.id=" + TRACE_ID));
            assertThat(lines.get(1), containsString("AccessLog: GET /v1/authorizations/{id} 404 "));
            assertThat(lines.get(2), containsString("http.response.status_code=401 "));
            assertThat(lines.get(2), containsString("merchant.id=- "));
            assertThat(lines.get(3), containsString(" unmatched 404 "));
            assertThat(lines.get(4), containsString("http.response.status_code=400 "));
            assertThat(logs.text(), not(containsString(PAN)));
            assertThat(logs.text(), not(containsString("1111-1111")));
            assertThat(logs.text(), not(containsString("cvc=123")));
            assertThat(logs.text(), not(containsString("Bearer")));
        }
    }

    @Test
    void aSampledAccessLogKeepsEvery5xxAndTheSampledShare() throws Exception {
        try (TestService service = TestService.start(Map.of("access-log.sample-ratio", "0.0"));
             LogCapture logs = LogCapture.start()) {
            for (int i = 0; i < 5; i++) {
                send(Http.request(service.business("/ping")).GET());
            }
            HttpResponse<String> failed = send(Http.request(service.business("/v1/authorizations"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "access-502")
                    .POST(HttpRequest.BodyPublishers.ofString(Http.VALID_BODY.replace(PAN, "4000000000000119"))));
            assertThat(failed.statusCode(), is(502));
            List<String> lines = accessLines(logs, 2);
            assertThat(String.join("\n", lines), lines, hasSize(1));
            assertThat(lines.getFirst(), containsString("http.response.status_code=502 "));
        }
    }

    @Test
    void aDisabledAccessLogWritesNothing() throws Exception {
        try (TestService service = TestService.start(Map.of("access-log.enabled", "false"));
             LogCapture logs = LogCapture.start()) {
            assertThat(send(Http.request(service.business("/ping")).GET()).statusCode(), is(200));
            assertThat(accessLines(logs, 1), is(empty()));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"access-log.sample-ratio=1.5", "access-log.sample-ratio=-0.1",
            "access-log.sample-ratio=half", "access-log.enabled=maybe"})
    void aBadSettingFailsStartupNamingTheKey(String setting) {
        String[] keyValue = setting.split("=");
        Config config = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource()
                .addSource(ConfigSources.create(Map.of(keyValue[0], keyValue[1])))
                .addSource(ConfigSources.classpath("application.yaml")).build();
        ConfigurationException error = assertThrows(ConfigurationException.class, () -> AppSettings.create(config));
        assertThat(error.getMessage(), containsString(keyValue[0]));
    }

    // The line is written once the response has gone: wait a little for the last one.
    private static List<String> accessLines(LogCapture logs, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + 2_000_000_000L;
        List<String> lines;
        do {
            lines = logs.text().lines().filter(line -> line.contains(" http.route=")).toList();
            if (lines.size() >= expected) {
                return lines;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return lines;
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return Http.client().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
