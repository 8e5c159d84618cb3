-- payments-authorization, schema version 1 (Flyway; never edit an applied migration, add V2__... instead).
-- No card number and no CVC anywhere: fingerprints are keyed hashes, bodies hold brand and last four digits only.

-- One row per idempotency key (operation + merchant + Idempotency-Key). IN_FLIGHT rows expire with their lease
-- (renewed while the request runs), COMPLETED rows with their decision. An expired row counts as absent for every
-- operation and is deleted by the retention sweeper; a claim may take it over first.
CREATE TABLE idempotency_records (
    lookup_key       text        PRIMARY KEY,          -- RequestIdentities.lookupKey: length-prefixed parts
    merchant         text        NOT NULL,
    operation        text        NOT NULL,
    idempotency_key  text        NOT NULL,
    fingerprint      text        NOT NULL,             -- HMAC-SHA256 of the canonical request, hex
    state            text        NOT NULL CHECK (state IN ('in_flight', 'completed')),
    fencing_token    bigint      NOT NULL,             -- grows per key: microseconds of the database clock, or +1
    lease_expires_at timestamptz,                      -- in flight only
    response_kind    text,                             -- completed only: the stored response, a row of decisions
    response_id      text,
    expires_at       timestamptz NOT NULL,             -- the lease, or once completed the decision's retention
    CHECK ((state = 'in_flight') = (lease_expires_at IS NOT NULL)),
    CHECK ((state = 'completed') = (response_id IS NOT NULL))
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

-- Recorded decisions (the recovery point): the exact body every answer for an attempt sends, insert-if-absent,
-- kept for idempotency.retention.
CREATE TABLE decisions (
    kind        text        NOT NULL,                  -- e.g. authorization
    id          text        NOT NULL,                  -- derived from the attempt id
    attempt_id  text        NOT NULL,
    body        bytea       NOT NULL,
    recorded_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX decisions_expiry ON decisions (expires_at);

-- The system of record: one row per authorization, written in the transaction that records its decision. Never
-- deleted by the service (the retention applies to replays and GET, not to the record of a payment).
CREATE TABLE authorizations (
    id           uuid        PRIMARY KEY,
    attempt_id   text        NOT NULL UNIQUE,
    merchant     text        NOT NULL,
    reference    text,
    amount       bigint      NOT NULL CHECK (amount > 0),   -- minor units
    currency     char(3)     NOT NULL,
    brand        text        NOT NULL,
    last_four    char(4)     NOT NULL,
    status       text        NOT NULL CHECK (status IN ('APPROVED', 'DECLINED')),
    decline_code text,
    created_at   timestamptz NOT NULL
);
CREATE INDEX authorizations_merchant_created ON authorizations (merchant, created_at);

-- Per-merchant quota counts, global to every replica: changed in the same statement as the record they count, and
-- the merchant's row lock makes check-and-count one step. A record counts until it is deleted (released, swept)
-- or taken over, like in memory.
CREATE TABLE merchant_quotas (
    merchant  text    PRIMARY KEY,
    in_flight integer NOT NULL CHECK (in_flight >= 0),
    records   integer NOT NULL CHECK (records >= 0)
);

CREATE FUNCTION idempotency_count(p_merchant text, p_in_flight integer, p_records integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_in_flight <> 0 OR p_records <> 0 THEN
        INSERT INTO merchant_quotas AS q (merchant, in_flight, records)
        VALUES (p_merchant, greatest(p_in_flight, 0), greatest(p_records, 0))
        ON CONFLICT (merchant) DO UPDATE
            SET in_flight = greatest(q.in_flight + p_in_flight, 0), records = greatest(q.records + p_records, 0);
    END IF;
END;
$$;

-- Claim-or-recover, one atomic step (IdempotencyStore.claim): mismatch, else a recorded decision (replay, or recover
-- and complete the key), else in flight, else the merchant's quota, else acquire with a new token. Identities come
-- as parallel arrays, current secret first. Returns outcome, identity (1-based), token, body.
CREATE FUNCTION idempotency_claim(p_lookup_key text, p_merchant text, p_operation text, p_key text,
                                  p_fingerprints text[], p_kinds text[], p_ids text[], p_lease_ms bigint,
                                  p_max_in_flight integer, p_max_records integer)
RETURNS TABLE (outcome text, identity integer, token bigint, body bytea)
LANGUAGE plpgsql AS $$
DECLARE
    rec        idempotency_records%ROWTYPE;
    found_row  boolean;
    live       boolean;
    matched    integer;
    d          decisions%ROWTYPE;
    now_ts     timestamptz;
    d_in       integer;
    d_rec      integer;
    q          merchant_quotas%ROWTYPE;
    new_token  bigint;
    chosen     integer;
BEGIN
    -- Serializes every claim and recording of this key, also while no row exists yet.
    PERFORM pg_advisory_xact_lock(hashtextextended('idempotency:' || p_lookup_key, 0));
    now_ts := clock_timestamp();
    SELECT * INTO rec FROM idempotency_records r WHERE r.lookup_key = p_lookup_key FOR UPDATE;
    found_row := FOUND;
    live := found_row AND rec.expires_at > now_ts;
    IF live THEN
        FOR i IN 1 .. array_length(p_fingerprints, 1) LOOP
            IF rec.fingerprint = p_fingerprints[i] THEN matched := i; END IF;
        END LOOP;
        IF matched IS NULL THEN
            RETURN QUERY SELECT 'mismatch'::text, 0, 0::bigint, NULL::bytea;
            RETURN;
        END IF;
    END IF;
    FOR i IN 1 .. array_length(p_fingerprints, 1) LOOP
        CONTINUE WHEN matched IS NOT NULL AND i <> matched;
        SELECT * INTO d FROM decisions x WHERE x.kind = p_kinds[i] AND x.id = p_ids[i] AND x.expires_at > now_ts;
        IF FOUND THEN
            IF live AND rec.state = 'completed' THEN
                RETURN QUERY SELECT 'replay'::text, i, 0::bigint, d.body;
                RETURN;
            END IF;
            d_in := CASE WHEN found_row AND rec.state = 'in_flight' THEN -1 ELSE 0 END;
            d_rec := CASE WHEN found_row THEN 0 ELSE 1 END;
            INSERT INTO idempotency_records AS r VALUES (p_lookup_key, p_merchant, p_operation, p_key, p_fingerprints[i],
                    'completed', coalesce(rec.fencing_token, 0), NULL, d.kind, d.id, d.expires_at)
            ON CONFLICT (lookup_key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'completed',
                    lease_expires_at = NULL, response_kind = excluded.response_kind,
                    response_id = excluded.response_id, expires_at = excluded.expires_at;
            PERFORM idempotency_count(p_merchant, d_in, d_rec);
            RETURN QUERY SELECT 'recovered'::text, i, 0::bigint, d.body;
            RETURN;
        END IF;
    END LOOP;
    IF live AND rec.state = 'in_flight' THEN
        RETURN QUERY SELECT 'in_flight'::text, 0, 0::bigint, NULL::bytea;
        RETURN;
    END IF;
    -- Acquire: counts as a new in-flight record unless a lapsed one of this key is still counted, and as a new record
    -- unless a row of this key is still counted. The merchant's row lock makes check and count one step.
    d_in := CASE WHEN found_row AND rec.state = 'in_flight' THEN 0 ELSE 1 END;
    d_rec := CASE WHEN found_row THEN 0 ELSE 1 END;
    IF d_in <> 0 OR d_rec <> 0 THEN
        INSERT INTO merchant_quotas AS mq (merchant, in_flight, records) VALUES (p_merchant, d_in, d_rec)
        ON CONFLICT (merchant) DO UPDATE SET in_flight = mq.in_flight + d_in, records = mq.records + d_rec
            WHERE mq.in_flight + d_in <= p_max_in_flight AND mq.records + d_rec <= p_max_records;
        IF NOT FOUND THEN
            SELECT * INTO q FROM merchant_quotas m WHERE m.merchant = p_merchant;
            RETURN QUERY SELECT 'over_quota'::text,
                    CASE WHEN q.in_flight + d_in > p_max_in_flight THEN 1 ELSE 2 END, 0::bigint, NULL::bytea;
            RETURN;
        END IF;
    END IF;
    now_ts := clock_timestamp();
    new_token := greatest((extract(epoch FROM now_ts) * 1000000)::bigint, coalesce(rec.fencing_token, 0) + 1);
    chosen := coalesce(matched, 1);
    INSERT INTO idempotency_records AS r VALUES (p_lookup_key, p_merchant, p_operation, p_key, p_fingerprints[chosen],
            'in_flight', new_token, now_ts + p_lease_ms * interval '1 millisecond', NULL, NULL,
            now_ts + p_lease_ms * interval '1 millisecond')
    ON CONFLICT (lookup_key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'in_flight',
            fencing_token = excluded.fencing_token, lease_expires_at = excluded.lease_expires_at,
            response_kind = NULL, response_id = NULL, expires_at = excluded.expires_at;
    RETURN QUERY SELECT 'acquired'::text, chosen, new_token, NULL::bytea;
END;
$$;

-- Record-and-complete, one atomic step (IdempotencyStore.recordAndComplete): the decision insert-if-absent (an
-- expired one counts as absent), the authorization row with it when given, then the completion of the key if it is
-- IN_FLIGHT with this token or absent. A refused completion is not an error: the decision commits all the same.
CREATE FUNCTION idempotency_record(p_lookup_key text, p_merchant text, p_operation text, p_key text,
                                   p_fingerprint text, p_token bigint, p_kind text, p_id text, p_attempt_id text,
                                   p_body bytea, p_retention_ms bigint,
                                   a_id uuid, a_merchant text, a_reference text, a_amount bigint, a_currency text,
                                   a_brand text, a_last_four text, a_status text, a_decline_code text,
                                   a_created_at timestamptz)
RETURNS TABLE (inserted boolean, completed boolean, winner bytea)
LANGUAGE plpgsql AS $$
DECLARE
    rec        idempotency_records%ROWTYPE;
    found_row  boolean;
    now_ts     timestamptz;
    was_new    boolean;
    w_body     bytea;
    w_kind     text;
    w_id       text;
    w_expires  timestamptz;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('idempotency:' || p_lookup_key, 0));
    now_ts := clock_timestamp();
    INSERT INTO decisions AS x VALUES (p_kind, p_id, p_attempt_id, p_body, now_ts,
                                       now_ts + p_retention_ms * interval '1 millisecond')
    ON CONFLICT (kind, id) DO UPDATE SET attempt_id = excluded.attempt_id, body = excluded.body,
            recorded_at = excluded.recorded_at, expires_at = excluded.expires_at
        WHERE x.expires_at <= now_ts;
    was_new := FOUND;
    SELECT x.body, x.kind, x.id, x.expires_at INTO w_body, w_kind, w_id, w_expires
        FROM decisions x WHERE x.kind = p_kind AND x.id = p_id;
    IF was_new AND a_id IS NOT NULL THEN
        INSERT INTO authorizations VALUES (a_id, p_attempt_id, a_merchant, a_reference, a_amount, a_currency, a_brand,
                                           a_last_four, a_status, a_decline_code, a_created_at)
        ON CONFLICT DO NOTHING;
    END IF;
    SELECT * INTO rec FROM idempotency_records r WHERE r.lookup_key = p_lookup_key FOR UPDATE;
    found_row := FOUND;
    IF found_row AND rec.expires_at > now_ts AND NOT (rec.state = 'in_flight' AND rec.fencing_token = p_token) THEN
        RETURN QUERY SELECT was_new, false, w_body;
        RETURN;
    END IF;
    INSERT INTO idempotency_records AS r VALUES (p_lookup_key, p_merchant, p_operation, p_key, p_fingerprint,
            'completed', p_token, NULL, w_kind, w_id, w_expires)
    ON CONFLICT (lookup_key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'completed',
            fencing_token = excluded.fencing_token, lease_expires_at = NULL, response_kind = excluded.response_kind,
            response_id = excluded.response_id, expires_at = excluded.expires_at;
    PERFORM idempotency_count(p_merchant,
                              CASE WHEN found_row AND rec.state = 'in_flight' THEN -1 ELSE 0 END,
                              CASE WHEN found_row THEN 0 ELSE 1 END);
    RETURN QUERY SELECT was_new, true, w_body;
END;
$$;

-- Release (IdempotencyStore.release): deletes the key only while IN_FLIGHT with this token under a live lease.
CREATE FUNCTION idempotency_release(p_lookup_key text, p_token bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    gone_merchant text;
BEGIN
    DELETE FROM idempotency_records r
        WHERE r.lookup_key = p_lookup_key AND r.state = 'in_flight' AND r.fencing_token = p_token
          AND r.expires_at > clock_timestamp()
        RETURNING r.merchant INTO gone_merchant;
    IF gone_merchant IS NULL THEN
        RETURN false;
    END IF;
    PERFORM idempotency_count(gone_merchant, -1, -1);
    RETURN true;
END;
$$;

-- The retention sweeper: deletes at most p_batch expired key rows and p_batch expired decisions, skipping rows
-- another transaction holds (replicas sweep side by side), and uncounts the rows from their merchants in merchant
-- order (two sweepers never wait on each other in opposite orders). Returns the key rows deleted.
CREATE FUNCTION idempotency_sweep(p_batch integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    merchants  text[];
    in_flight  integer[];
    total      integer[];
    deleted    integer := 0;
BEGIN
    WITH gone AS (
        DELETE FROM idempotency_records r WHERE r.lookup_key IN (
            SELECT s.lookup_key FROM idempotency_records s WHERE s.expires_at <= clock_timestamp()
            ORDER BY s.expires_at LIMIT p_batch FOR UPDATE SKIP LOCKED)
        RETURNING r.merchant, r.state)
    SELECT array_agg(g.merchant ORDER BY g.merchant), array_agg(g.f ORDER BY g.merchant),
           array_agg(g.n ORDER BY g.merchant)
    INTO merchants, in_flight, total
    FROM (SELECT merchant, count(*) FILTER (WHERE state = 'in_flight')::integer AS f, count(*)::integer AS n
          FROM gone GROUP BY merchant) g;
    IF merchants IS NOT NULL THEN
        FOR i IN 1 .. array_length(merchants, 1) LOOP
            PERFORM idempotency_count(merchants[i], -in_flight[i], -total[i]);
            deleted := deleted + total[i];
        END LOOP;
    END IF;
    DELETE FROM decisions x WHERE (x.kind, x.id) IN (
        SELECT y.kind, y.id FROM decisions y WHERE y.expires_at <= clock_timestamp()
        ORDER BY y.expires_at LIMIT p_batch FOR UPDATE SKIP LOCKED);
    RETURN deleted;
END;
$$;
