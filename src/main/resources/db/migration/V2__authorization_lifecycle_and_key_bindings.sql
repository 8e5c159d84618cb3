-- The authorization becomes a resource with a lifecycle, read by GET from here (the idempotency retention bounds
-- replays only), and every idempotency key is bound durably to the request it was first used with.
--
-- ${validity_ms} is authorization.validity in milliseconds, set by the service when it migrates: rows written before
-- this version get expires_at = created_at + validity, and those already past it become EXPIRED without an acquirer
-- call (nothing in them was ever capturable through the service).

ALTER TABLE authorizations
    ADD COLUMN state           text,
    ADD COLUMN captured_amount bigint NOT NULL DEFAULT 0,
    ADD COLUMN captures        text[] NOT NULL DEFAULT '{}',  -- capture ids, oldest first
    ADD COLUMN expires_at      timestamptz,
    ADD COLUMN updated_at      timestamptz;

UPDATE authorizations SET
    expires_at = created_at + ${validity_ms} * interval '1 millisecond',
    state = CASE WHEN status = 'DECLINED' THEN 'DECLINED'
                 WHEN created_at + ${validity_ms} * interval '1 millisecond' <= clock_timestamp() THEN 'EXPIRED'
                 ELSE 'APPROVED' END,
    updated_at = CASE WHEN status = 'APPROVED'
                       AND created_at + ${validity_ms} * interval '1 millisecond' <= clock_timestamp()
                      THEN created_at + ${validity_ms} * interval '1 millisecond'
                      ELSE created_at END;

ALTER TABLE authorizations
    ALTER COLUMN state SET NOT NULL,
    ALTER COLUMN expires_at SET NOT NULL,
    ALTER COLUMN updated_at SET NOT NULL,
    ADD CONSTRAINT authorizations_state
        CHECK (state IN ('APPROVED', 'CAPTURED', 'VOIDED', 'EXPIRED', 'REVERSED', 'DECLINED')),
    ADD CONSTRAINT authorizations_captured_within_amount
        CHECK (captured_amount >= 0 AND captured_amount <= amount);

-- What the expiry worker looks for: capturable authorizations by expiry.
CREATE INDEX authorizations_capturable_expiry ON authorizations (expires_at) WHERE state = 'APPROVED';

-- Each (operation, merchant, parent, idempotency key) ever used, with the fingerprint of the request it was first
-- used with; never deleted by the service, so a different request under a used key is refused also after the
-- registry (Redis, or the retention sweep) forgot the key.
CREATE TABLE idempotency_bindings (
    lookup_key      text        PRIMARY KEY,   -- RequestIdentities.lookupKey: length-prefixed parts
    merchant        text        NOT NULL,
    operation       text        NOT NULL,
    idempotency_key text        NOT NULL,
    fingerprint     text        NOT NULL,      -- HMAC-SHA256 of the canonical request, hex
    created_at      timestamptz NOT NULL
);
