-- Captures and voids of an authorization: each reserved first (one conditional write with the authorization's row
-- lock: the state allows it, the remainder covers it, nothing conflicting pending), then settled once by the
-- acquirer's answer. An unknown answer keeps the reservation until the retry (same attempt id) settles it.

ALTER TABLE authorizations
    ADD COLUMN reserved_amount bigint  NOT NULL DEFAULT 0,     -- pending captures, minor units
    ADD COLUMN void_pending    boolean NOT NULL DEFAULT false,  -- a void (a request's or the expiry's) is pending
    ADD CONSTRAINT authorizations_reserved_within_amount
        CHECK (reserved_amount >= 0 AND captured_amount + reserved_amount <= amount);

-- Never deleted by the service, like the authorizations.
CREATE TABLE authorization_operations (
    id               uuid        PRIMARY KEY,                -- derived from the attempt id
    kind             text        NOT NULL CHECK (kind IN ('capture', 'void', 'expiry')),  -- expiry: the worker's void
    authorization_id uuid        NOT NULL REFERENCES authorizations (id),
    attempt_id       text        NOT NULL UNIQUE,
    merchant         text        NOT NULL,
    amount           bigint      NOT NULL CHECK (amount >= 0),
    currency         char(3)     NOT NULL,
    status           text        NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'DECLINED')),
    decline_code     text,
    created_at       timestamptz NOT NULL,
    settled_at       timestamptz
);
CREATE INDEX authorization_operations_parent ON authorization_operations (authorization_id);
