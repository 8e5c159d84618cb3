package com.example.payments;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Year;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.issuer.IssuerRules;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;

/**
 * The startup warm-up's requests ({@link WarmUp}): the mix, in turn: new approvals, a replay, a decline, an invalid
 * body (400) and a {@code GET} of a created id, each with synthetic card numbers, as merchant {@value #MERCHANT}.
 * Counted in {@code warm_up_requests_total{outcome}} ({@code answered}: the expected status; {@code failed}: another
 * status or an error, the first logged once).
 */
final class WarmUpRequests {

    /** The sandbox's caller. */
    static final String MERCHANT = "m_warm_up";
    // Its lines are the warm-up's, under the warm-up's logger.
    private static final System.Logger LOGGER = System.getLogger(WarmUp.class.getName());
    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    private static final String PATH = "/v1/authorizations";

    private final Counter answered;
    private final Counter failed;
    private final AtomicReference<String> firstFailure = new AtomicReference<>();

    /**
     * @param meters the service's registry: {@code warm_up_requests_total} goes there
     */
    WarmUpRequests(MeterRegistry meters) {
        this.answered = counter(meters, "answered");
        this.failed = counter(meters, "failed");
    }

    /** Forgets the first failure of an earlier run (the counters keep counting). */
    void reset() {
        firstFailure.set(null);
    }

    /**
     * @return the first unexpected answer since {@link #reset()}, e.g. {@code status 503 to request 0}, or
     *         {@code null}
     */
    String firstFailure() {
        return firstFailure.get();
    }

    /**
     * Sends request {@code i} of the mix and counts its outcome.
     *
     * @param client     the sandbox's client
     * @param worker     the client's number (part of its keys)
     * @param i          the request's number: its kind is {@code i % 8}
     * @param location   the Location of the last authorization this client created, or {@code null}
     * @param ok         incremented when the answer had the expected status
     * @param storeOk    incremented when it had, and the request went through the store (all but the 400)
     * @param rolledBack {@code true} when the sandbox's stores keep nothing (a {@code GET} of a created id is 404)
     * @return the Location of the last authorization this client created
     */
    String send(WebClient client, int worker, int i, String location, AtomicInteger ok,
                        AtomicInteger storeOk, boolean rolledBack) {
        int kind = i % 8;
        String key = "warm-up-" + worker + "-" + (kind == 4 ? i - 1 : i);
        try (HttpClientResponse response = kind == 7 && location != null
                ? client.get(location).request()
                : client.post(PATH)
                        .header(IDEMPOTENCY_KEY, key)
                        .contentType(MediaTypes.APPLICATION_JSON)
                        .submit(body(kind, kind == 4 ? i - 1 : i))) {
            int status = response.status().code();
            response.entity().as(byte[].class);
            // A rolled-back store kept nothing the sandbox created: its GET is a 404.
            int expected = kind == 6 ? 400 : kind == 7 && location != null ? (rolledBack ? 404 : 200) : 201;
            if (status == expected) {
                answered.increment();
                ok.incrementAndGet();
                if (kind != 6) {
                    storeOk.incrementAndGet();
                }
            } else {
                fail("status " + status + " to request " + i);
            }
            return status == 201 ? response.headers().first(HeaderNames.LOCATION).orElse(location) : location;
        } catch (RuntimeException e) {
            fail(String.valueOf(e));
            return location;
        }
    }

    private void fail(String what) {
        if (firstFailure.compareAndSet(null, what) && failed.count() == 0) {
            LOGGER.log(Level.WARNING, "Warm-up: unexpected answer from the sandbox ({0}); counted in "
                                      + "warm_up_requests_total'{'outcome=\"failed\"'}'", what);
        }
        failed.increment();
    }

    // Synthetic numbers made here, none written in the code: any Luhn-valid one the rules do not name approves, the
    // declining test card declines, the same number with a wrong check digit is a 400.
    private static byte[] body(int kind, int i) {
        String card = switch (kind) {
        case 5 -> IssuerRules.DECLINED_CARD;
        case 6 -> wrongCheckDigit(syntheticCard(i));
        default -> syntheticCard(i);
        };
        return ("{\"merchantId\":\"" + MERCHANT + "\",\"reference\":\"warm-up-" + i + "\",\"amount\":{\"value\":"
                + (100 + i % 5000) + ",\"currency\":\"EUR\"},\"card\":{\"number\":\"" + card
                + "\",\"expiryMonth\":12,\"expiryYear\":" + (Year.now().getValue() + 3) + ",\"cvc\":\"123\"}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    // 16 digits: a Visa ("4") or Mastercard ("51") prefix, the index, and the Luhn check digit.
    private static String syntheticCard(int i) {
        String prefix = i % 2 == 0 ? "4" : "51";
        // Offset so that no index makes one of the rules' named test cards (all below 4000000000010000).
        String payload = prefix + String.format("%0" + (15 - prefix.length()) + "d", 1_000_000L + i);
        int sum = 0;
        for (int d = 0; d < payload.length(); d++) {
            int digit = payload.charAt(payload.length() - 1 - d) - '0';
            // From the right, every other digit of the payload is doubled (the check digit will sit right of them).
            sum += d % 2 == 0 ? (digit * 2 > 9 ? digit * 2 - 9 : digit * 2) : digit;
        }
        return payload + (10 - sum % 10) % 10;
    }

    private static String wrongCheckDigit(String card) {
        int last = card.charAt(card.length() - 1) - '0';
        return card.substring(0, card.length() - 1) + (last + 1) % 10;
    }

    private static Counter counter(MeterRegistry meters, String outcome) {
        return meters.getOrCreate(Counter.builder("warm_up_requests")
                                          .tags(List.of(Tag.create("outcome", outcome)))
                                          .description("Synthetic requests of the startup warm-up, through the "
                                                       + "sandbox; never counted anywhere else"));
    }
}
