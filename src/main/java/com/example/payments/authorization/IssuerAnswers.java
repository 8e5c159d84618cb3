package com.example.payments.authorization;

import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

import com.example.payments.http.Json;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads the issuer's answer to an {@link HttpAuthorizer} call, the same shape for an authorization, a capture and a
 * void: {@code {"attemptId","status":"APPROVED"|"DECLINED","declineCode"?,"decidedAt"}}. Anything else is an
 * unknown outcome ({@link Authorizer.IssuerUnavailableException}).
 */
final class IssuerAnswers {

    private static final Pattern DECLINE_CODE = Pattern.compile("[a-z0-9_]{1,64}");

    private IssuerAnswers() {
    }

    /**
     * The decision in an answer.
     *
     * @param answer    the 200 body
     * @param attemptId the attempt id the call was made with: an answer for another one is refused
     * @return the decision
     * @throws Authorizer.IssuerUnavailableException when the body is not a decision for this attempt id
     */
    static Authorizer.Decision decision(byte[] answer, String attemptId) throws Authorizer.IssuerUnavailableException {
        JsonNode json;
        try {
            json = Json.mapper().readTree(answer);
        } catch (IOException e) {
            throw new Authorizer.IssuerUnavailableException("issuer answered a body that is not JSON");
        }
        if (json == null || !attemptId.equals(json.path("attemptId").asText(attemptId))) {
            throw new Authorizer.IssuerUnavailableException("issuer answered for another attempt");
        }
        String code = json.path("declineCode").asText("");
        Instant decidedAt = decidedAt(json);
        return switch (json.path("status").asText("")) {
        case "APPROVED" -> Authorizer.Decision.approve(decidedAt);
        case "DECLINED" -> {
            if (!DECLINE_CODE.matcher(code).matches()) {
                throw new Authorizer.IssuerUnavailableException("issuer declined without a valid decline code");
            }
            yield Authorizer.Decision.decline(code, decidedAt);
        }
        default -> throw new Authorizer.IssuerUnavailableException("issuer answered without an APPROVED or DECLINED status");
        };
    }

    // The issuer's time of the decision, repeated on every answer for the attempt id: the authorization's createdAt,
    // so that a decision the store lost and the issuer answers again is rebuilt byte for byte.
    private static Instant decidedAt(JsonNode json) throws Authorizer.IssuerUnavailableException {
        try {
            return Instant.parse(json.path("decidedAt").asText(""));
        } catch (DateTimeParseException e) {
            throw new Authorizer.IssuerUnavailableException("issuer answered without a valid decidedAt");
        }
    }

}
