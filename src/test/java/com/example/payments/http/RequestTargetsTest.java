package com.example.payments.http;

import java.util.Optional;

import io.helidon.http.Method;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The request-target rules of RFC 9112 section 3.2 and RFC 3986, one target at a time (the same rules over the wire:
 * {@code HostileRequestLinesIT}).
 */
class RequestTargetsTest {

    @ParameterizedTest(name = "{0} with Host {1}: served {2}")
    @CsvSource({
            "/ping, 127.0.0.1, true",
            "/v1/authorizations/abc, 127.0.0.1, true",
            "/ping/, 127.0.0.1, true",
            "/%70ing, 127.0.0.1, true",
            "/a%20b, 127.0.0.1, true",
            "http://127.0.0.1/ping, 127.0.0.1, true",
            "http://127.0.0.1:80/ping, 127.0.0.1, true",
            "HTTP://Example.COM/ping, example.com:80, true",
            "http://[::1]:8080/ping, [::1]:8080, true",
            "http://example.com, example.com, true",
            "ftp://example.com/ping, example.com, false",
            "https://example.com/ping, example.com, false",
            "http://example.com:99999/ping, example.com:99999, false",
            "http://example.com:123456/ping, example.com:123456, false",
            "http://u:p@example.com/ping, example.com, false",
            "http://@example.com/ping, example.com, false",
            "http:///ping, 127.0.0.1, false",
            "http://:80/ping, :80, false",
            "http://other.example/ping, example.com, false",
            "http://example.com:8080/ping, example.com, false",
            "ping, 127.0.0.1, false",
            "//ping, 127.0.0.1, false",
            "/a//b, 127.0.0.1, false",
            "/v1/authorizations/../../ping, 127.0.0.1, false",
            "/./ping, 127.0.0.1, false",
            "/v1/%2E%2E/ping, 127.0.0.1, false",
            "/v1/%2e/ping, 127.0.0.1, false",
            "/v1%2Fauthorizations, 127.0.0.1, false",
            "/v1%2fauthorizations, 127.0.0.1, false",
            "/p%zzing, 127.0.0.1, false",
            "/ping%7, 127.0.0.1, false",
            "http://example.com//ping, example.com, false",
            "/ping, 127.0.0.1:99999, false",
            "/ping, 127.0.0.1:65536, false",
            "/ping, 127.0.0.1:65535, true",
            "/ping, '', true",
    })
    void aTargetIsServedOnlyWhenItNamesOneResourceTheWayHttpDefinesIt(String target, String host, boolean served) {
        Optional<String> refusal = RequestTargets.refusal(target, Method.GET, host);
        assertThat(refusal.toString(), refusal.isEmpty(), is(served));
    }

    @ParameterizedTest(name = "{0} *: served {1}")
    @CsvSource({"OPTIONS, true", "GET, false"})
    void theAsteriskFormIsForOptionsOnly(String method, boolean served) {
        assertThat(RequestTargets.refusal("*", Method.create(method), "x").isEmpty(), is(served));
    }
}
