-- The reference authorization's tables (load-tests/store-throughput/run.sh): a claim per key, a decision per claim.
-- Fixed: the product is measured as a ratio of this, so changing it changes every past ratio.
DROP TABLE IF EXISTS reference_claims, reference_decisions;
CREATE TABLE reference_claims (
    lookup_key  text        PRIMARY KEY,
    state       text        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE TABLE reference_decisions (
    id          text        PRIMARY KEY,
    body        bytea       NOT NULL,
    recorded_at timestamptz NOT NULL
);
