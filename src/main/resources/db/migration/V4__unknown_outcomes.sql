-- Authorizations whose outcome at the issuer is unknown (the authorizer timed out, failed after the call may have
-- been sent, or the drain cut the request off), kept until a client retry or the reconciler resolves them: the
-- reconciler claims the key with the request's fingerprint, reverses the attempt at the acquirer, and records the
-- authorization as REVERSED. No PAN, no CVC: the card's brand and last four digits only.
CREATE TABLE unknown_outcomes (
    attempt_id  text        PRIMARY KEY,                -- sent to the issuer; one record per attempt
    lookup_key  text        NOT NULL,                   -- RequestIdentities.lookupKey: length-prefixed parts
    merchant    text        NOT NULL,
    fingerprint text        NOT NULL,                   -- HMAC-SHA256 of the canonical request, hex
    resource_id uuid        NOT NULL,                   -- the authorization's id, derived from the attempt id
    reference   text,
    amount      bigint      NOT NULL CHECK (amount > 0),
    currency    char(3)     NOT NULL,
    brand       text        NOT NULL,
    last_four   text        NOT NULL,
    recorded_at timestamptz NOT NULL,                   -- the latest time the attempt's outcome became unknown
    reverse_at  timestamptz NOT NULL                    -- recorded_at + authorizer.unknown-outcome.reverse-after
);
CREATE INDEX unknown_outcomes_due ON unknown_outcomes (reverse_at);
