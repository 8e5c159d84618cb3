package com.example.payments.issuer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.example.payments.http.Problem;
import com.example.payments.http.ProblemResponses;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * The issuer simulator's API.
 *
 * <ul>
 *     <li>{@code POST /v1/authorizations} with header {@code Idempotency-Key: <attempt id>} (1 to 255 printable ASCII
 *     characters) and a JSON body {@code {"merchantId","reference"?,"amount":{"value","currency"},"card":{"number",
 *     ...}}}: 200 {@code {"attemptId","status":"APPROVED"|"DECLINED","declineCode"?,"decidedAt"}} ({@code decidedAt}
 *     ISO-8601 UTC, the time of the first decision for the attempt id), with {@code Idempotent-Replayed: true} when the
 *     attempt id was decided before; 503 problem (with {@code Retry-After})
 *     for the unreachable test card; 400 problem naming the header or field when the call is malformed.</li>
 *     <li>{@code POST /v1/authorizations/{authorizationAttemptId}/captures} {@code {"amount":{"value","currency"}}}
 *     and {@code POST /v1/authorizations/{authorizationAttemptId}/voids} (no body, or {@code {}}), each with its own
 *     attempt id as {@code Idempotency-Key}: 200 with the same decision body; declined {@code over_capture},
 *     {@code voided} or {@code unknown_authorization} by the issuer itself; the first answer again for a known attempt
 *     id, with {@code Idempotent-Replayed: true}.</li>
 *     <li>{@code GET /stats}: 200 {@link IssuerStats} as JSON; {@code GET /stats/operations}: 200
 *     {@code {"freshDecisions"}}, the captures and voids decided (each attempt id once); {@code GET /stats/ledger}:
 *     200 {@code {"freshDecisions","evictions","authorizations":{attemptId:{"amount","captured","voided"}},
 *     "operations":{attemptId:{"kind","authorizationAttemptId","amount","status","declineCode","sequence",
 *     "decidedAt"}}}}, every capture and void decision, what the fault soak checks the service against.</li>
 * </ul>
 * Card numbers and CVCs are never logged nor echoed.
 */
final class IssuerSimulatorService implements HttpService {

    private static final HeaderName IDEMPOTENCY_KEY = HeaderNames.create("Idempotency-Key");
    private static final HeaderName REPLAYED = HeaderNames.create("Idempotent-Replayed");
    private static final Pattern KEY = Pattern.compile("[\\x21-\\x7E]{1,255}");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final Pattern PAN = Pattern.compile("[0-9]{12,19}");

    private final SimulatedIssuer issuer;

    IssuerSimulatorService(SimulatedIssuer issuer) {
        this.issuer = issuer;
    }

    /**
     * The answer to a decided call.
     *
     * @param attemptId   the attempt id it answers
     * @param status      {@code APPROVED} or {@code DECLINED}
     * @param declineCode when declined
     * @param decidedAt   when the issuer decided, ISO-8601 UTC with millisecond precision: the same on every answer
     *                    for the attempt id
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record DecisionBody(String attemptId, String status, String declineCode, String decidedAt) {
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/v1/authorizations", this::authorize)
                .post("/v1/authorizations/{attemptId}/captures", (req, res) -> operation(req, res, true))
                .post("/v1/authorizations/{attemptId}/voids", (req, res) -> operation(req, res, false))
                .post("/v1/reversals", this::reverse)
                .get("/stats", this::stats)
                .get("/stats/operations", (req, res) -> res.header(HeaderValues.CONTENT_TYPE_JSON)
                        .header(HeaderNames.CACHE_CONTROL, "no-store")
                        .send("{\"freshDecisions\":" + issuer.freshOperationDecisions() + "}"))
                .get("/stats/ledger", (req, res) -> res.header(HeaderValues.CONTENT_TYPE_JSON)
                        .header(HeaderNames.CACHE_CONTROL, "no-store")
                        .send(Json.bytes(issuer.operationLedger())));
    }

    // A capture ({"amount":{"value","currency"}}) or a void (no body, or {}) of the authorization approved under the
    // attempt id of the path, deduplicated on its own attempt id (the Idempotency-Key): 200 with the decision.
    private void operation(ServerRequest req, ServerResponse res, boolean capture) throws InterruptedException {
        List<String> keys = req.headers().all(IDEMPOTENCY_KEY, List::of);
        if (keys.size() != 1 || !KEY.matcher(keys.getFirst()).matches()) {
            invalid(req, res, List.of(Problem.FieldError.header(IDEMPOTENCY_KEY.defaultCase(),
                    "send exactly one Idempotency-Key: the operation's attempt id")));
            return;
        }
        String attemptId = keys.getFirst();
        String authorization = req.path().pathParameters().get("attemptId");
        long amount = 0;
        if (capture) {
            JsonNode value;
            try {
                value = Json.mapper().readTree(req.content().inputStream()).path("amount").path("value");
            } catch (IOException | RuntimeException e) {
                invalid(req, res, List.of(Problem.FieldError.body("#", "the body is not valid JSON")));
                return;
            }
            if (!value.canConvertToExactIntegral() || !value.canConvertToLong() || value.asLong() <= 0) {
                invalid(req, res, List.of(Problem.FieldError.body("#/amount/value", "must be a positive integer")));
                return;
            }
            amount = value.asLong();
        }
        SimulatedIssuer.Decided decided = capture ? issuer.capture(attemptId, authorization, amount)
                : issuer.voidRemainder(attemptId, authorization);
        answer(res, attemptId, decided);
    }

    // A reversal {"attemptId","reversalId"}: 200 {"attemptId","status":"APPROVED"|"DECLINED","declineCode"?,
    // "decidedAt"}, APPROVED when an approval was reversed, DECLINED not_approved when there was none.
    private void reverse(ServerRequest req, ServerResponse res) throws InterruptedException {
        JsonNode body;
        try {
            body = Json.mapper().readTree(req.content().inputStream());
        } catch (IOException | RuntimeException e) {
            invalid(req, res, List.of(Problem.FieldError.body("#", "the body is not valid JSON")));
            return;
        }
        String attemptId = body == null ? "" : body.path("attemptId").asText("");
        String reversalId = body == null ? "" : body.path("reversalId").asText("");
        List<Problem.FieldError> errors = new ArrayList<>();
        if (!KEY.matcher(attemptId).matches()) {
            errors.add(Problem.FieldError.body("#/attemptId", "required: 1 to 255 printable ASCII characters"));
        }
        if (!KEY.matcher(reversalId).matches()) {
            errors.add(Problem.FieldError.body("#/reversalId", "required: 1 to 255 printable ASCII characters"));
        }
        if (!errors.isEmpty()) {
            invalid(req, res, errors);
            return;
        }
        SimulatedIssuer.Decided decided = issuer.reverse(reversalId, attemptId);
        answer(res, attemptId, decided);
    }

    // 200 {"attemptId","status","declineCode"?,"decidedAt"}, Idempotent-Replayed: true for an attempt id answered before.
    private static void answer(ServerResponse res, String attemptId, SimulatedIssuer.Decided decided) {
        if (decided.replayed()) {
            res.header(REPLAYED, "true");
        }
        res.status(Status.OK_200)
                .header(HeaderValues.CONTENT_TYPE_JSON)
                .send(Json.bytes(new DecisionBody(attemptId, decided.decision().approved() ? "APPROVED" : "DECLINED",
                                                  decided.decision().declineCode(), decided.decidedAt().toString())));
    }

    private void authorize(ServerRequest req, ServerResponse res) throws InterruptedException {
        List<String> keys = req.headers().all(IDEMPOTENCY_KEY, List::of);
        if (keys.size() != 1 || !KEY.matcher(keys.getFirst()).matches()) {
            invalid(req, res, List.of(Problem.FieldError.header(IDEMPOTENCY_KEY.defaultCase(),
                    "send exactly one Idempotency-Key: the attempt id, 1 to 255 printable ASCII characters")));
            return;
        }
        String attemptId = keys.getFirst();
        JsonNode body;
        try {
            body = Json.mapper().readTree(req.content().inputStream());
        } catch (IOException | RuntimeException e) {
            // Never quote the parser's message: it may contain a card number.
            invalid(req, res, List.of(Problem.FieldError.body("#", "the body is not valid JSON")));
            return;
        }
        List<Problem.FieldError> errors = new ArrayList<>();
        IssuerRequest request = request(attemptId, body == null ? Json.mapper().missingNode() : body, errors);
        if (!errors.isEmpty()) {
            invalid(req, res, errors);
            return;
        }
        switch (issuer.authorize(request)) {
        case SimulatedIssuer.Decided decided -> answer(res, attemptId, decided);
        case SimulatedIssuer.Unavailable unavailable -> ProblemResponses.sendRetryable(req, res, Problem.of(
                "issuer-unavailable", "Issuer unavailable", 503,
                "The simulated issuer cannot be reached for this card (test card 4000000000000119)."), 1);
        }
    }

    private static IssuerRequest request(String attemptId, JsonNode body, List<Problem.FieldError> errors) {
        String merchant = body.path("merchantId").asText("");
        if (merchant.isBlank()) {
            errors.add(Problem.FieldError.body("#/merchantId", "required"));
        }
        JsonNode reference = body.path("reference");
        if (!reference.isMissingNode() && !reference.isNull() && !reference.isTextual()) {
            errors.add(Problem.FieldError.body("#/reference", "must be a string"));
        }
        JsonNode value = body.path("amount").path("value");
        if (!value.canConvertToExactIntegral() || !value.canConvertToLong() || value.asLong() <= 0) {
            errors.add(Problem.FieldError.body("#/amount/value", "must be a positive integer (minor units)"));
        }
        String currency = body.path("amount").path("currency").asText("");
        if (!CURRENCY.matcher(currency).matches()) {
            errors.add(Problem.FieldError.body("#/amount/currency", "must be an ISO 4217 code such as EUR"));
        }
        String number = body.path("card").path("number").asText("");
        if (!PAN.matcher(number).matches()) {
            errors.add(Problem.FieldError.body("#/card/number", "must be 12 to 19 digits"));
        }
        return new IssuerRequest(attemptId, merchant, reference.isTextual() ? reference.asText() : null,
                                 value.asLong(), currency, number);
    }

    private static void invalid(ServerRequest req, ServerResponse res, List<Problem.FieldError> errors) {
        ProblemResponses.send(req, res, Problem.of("invalid-request", "Invalid request", 400,
                                                   "The authorization call is malformed.").withErrors(errors));
    }

    private void stats(ServerRequest req, ServerResponse res) {
        res.header(HeaderValues.CONTENT_TYPE_JSON)
                .header(HeaderNames.CACHE_CONTROL, "no-store")
                .send(Json.bytes(issuer.stats()));
    }
}
