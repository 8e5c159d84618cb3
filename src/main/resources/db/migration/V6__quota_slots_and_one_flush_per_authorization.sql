-- One merchant's requests no longer queue on one row, and a new authorization waits for two WAL flushes, not four.
--
-- Quota counts: merchant_quotas (V1) was one row per merchant that every claim and every recording of that merchant
-- updated, so its row lock, held until the COMMIT's WAL flush, serialized the merchant at the disk's pace. Counts now
-- go to up to 32 slot rows per merchant: a change goes to a slot no other transaction holds (SKIP LOCKED, so a
-- recording never waits for another one's flush), and a merchant's counts are the sum of its slots plus its
-- merchant_quotas row, which keeps what it counted before this version (a slot may go negative: only the sum is a
-- count). The quota stays exact: a claim that would add to the counts takes the merchant's advisory lock, then sums
-- and counts, so check-and-count is one step; that lock is held by claims only (until the claim's commit is
-- flushed), never by a recording, so a merchant's recordings never wait for each other.

-- Flushes: the claim and the recording each commit durably. The claim writes the key's binding to its request and
-- the merchant's in-flight count; a claim lost in a crash of the database would let another request body under the
-- same key be authorized too, and free quota that a running call still uses, so it waits for its flush like the
-- recording. The authorization row is written by the recording of its decision: two round trips per authorization.
--
-- Releases running the previous version's functions keep working: idempotency_claim and idempotency_count are
-- replaced so that they count in slots too, and nothing they wrote before is moved.

CREATE TABLE merchant_quota_slots (
    merchant  text     NOT NULL,
    slot      smallint NOT NULL CHECK (slot >= 0 AND slot < 32),
    in_flight integer  NOT NULL,
    records   integer  NOT NULL,
    PRIMARY KEY (merchant, slot)
);

-- A merchant's counts: its slots plus what merchant_quotas counted before this version.
CREATE VIEW merchant_quota_counts AS
    SELECT merchant, sum(in_flight)::integer AS in_flight, sum(records)::integer AS records
    FROM (SELECT merchant, in_flight, records FROM merchant_quota_slots
          UNION ALL
          SELECT merchant, in_flight, records FROM merchant_quotas) c
    GROUP BY merchant;

-- Adds to a merchant's counts in a slot no other transaction holds; when each is held, in a random slot (waiting for
-- it if another transaction holds that one too). Replaces V1's version, which changed the one row of merchant_quotas.
CREATE OR REPLACE FUNCTION idempotency_count(p_merchant text, p_in_flight integer, p_records integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_in_flight = 0 AND p_records = 0 THEN
        RETURN;
    END IF;
    UPDATE merchant_quota_slots s SET in_flight = s.in_flight + p_in_flight, records = s.records + p_records
        FROM (SELECT f.slot FROM merchant_quota_slots f WHERE f.merchant = p_merchant
              LIMIT 1 FOR UPDATE SKIP LOCKED) free
        WHERE s.merchant = p_merchant AND s.slot = free.slot;
    IF FOUND THEN
        RETURN;
    END IF;
    INSERT INTO merchant_quota_slots AS s VALUES (p_merchant, floor(random() * 32)::smallint, p_in_flight, p_records)
    ON CONFLICT (merchant, slot) DO UPDATE
        SET in_flight = s.in_flight + excluded.in_flight, records = s.records + excluded.records;
END;
$$;

-- Claim-or-recover, one atomic step, as V1's idempotency_claim, and with p_bind the key's binding (V2) in the same
-- step: a key bound to a request none of the identities is answers mismatch, and an acquisition binds a key bound
-- to none. Commits asynchronously (see above). Returns outcome, identity (1-based), token, body, and bound_here
-- (this claim made the binding, which a release without a decision removes again).
CREATE FUNCTION idempotency_claim_bind(p_lookup_key text, p_merchant text, p_operation text, p_key text,
                                       p_fingerprints text[], p_kinds text[], p_ids text[], p_lease_ms bigint,
                                       p_max_in_flight integer, p_max_records integer, p_bind boolean)
RETURNS TABLE (outcome text, identity integer, token bigint, body bytea, bound_here boolean)
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
    cur_in     integer;
    cur_rec    integer;
    bound_fp   text;
    made       boolean := false;
    new_token  bigint;
    chosen     integer;
BEGIN
    -- Fast path without the key's lock: the answers that write nothing (mismatch, replay, in flight).
    now_ts := clock_timestamp();
    SELECT * INTO rec FROM idempotency_records r WHERE r.lookup_key = p_lookup_key;
    IF FOUND AND rec.expires_at > now_ts THEN
        FOR i IN 1 .. array_length(p_fingerprints, 1) LOOP
            IF rec.fingerprint = p_fingerprints[i] THEN matched := i; END IF;
        END LOOP;
        IF matched IS NULL THEN
            RETURN QUERY SELECT 'mismatch'::text, 0, 0::bigint, NULL::bytea, false;
            RETURN;
        END IF;
        SELECT * INTO d FROM decisions x
            WHERE x.kind = p_kinds[matched] AND x.id = p_ids[matched] AND x.expires_at > now_ts;
        IF FOUND AND rec.state = 'completed' THEN
            RETURN QUERY SELECT 'replay'::text, matched, 0::bigint, d.body, false;
            RETURN;
        END IF;
        IF NOT FOUND AND rec.state = 'in_flight' THEN
            RETURN QUERY SELECT 'in_flight'::text, 0, 0::bigint, NULL::bytea, false;
            RETURN;
        END IF;
        matched := NULL;
    END IF;
    -- Serializes every claim and recording of this key that may write, also while no row exists yet.
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
            RETURN QUERY SELECT 'mismatch'::text, 0, 0::bigint, NULL::bytea, false;
            RETURN;
        END IF;
    END IF;
    FOR i IN 1 .. array_length(p_fingerprints, 1) LOOP
        CONTINUE WHEN matched IS NOT NULL AND i <> matched;
        SELECT * INTO d FROM decisions x WHERE x.kind = p_kinds[i] AND x.id = p_ids[i] AND x.expires_at > now_ts;
        IF FOUND THEN
            IF live AND rec.state = 'completed' THEN
                RETURN QUERY SELECT 'replay'::text, i, 0::bigint, d.body, false;
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
            RETURN QUERY SELECT 'recovered'::text, i, 0::bigint, d.body, false;
            RETURN;
        END IF;
    END LOOP;
    IF live AND rec.state = 'in_flight' THEN
        RETURN QUERY SELECT 'in_flight'::text, 0, 0::bigint, NULL::bytea, false;
        RETURN;
    END IF;
    chosen := coalesce(matched, 1);
    -- The key's binding decides which request it belongs to (the records may have lost the one that said so).
    IF p_bind THEN
        INSERT INTO idempotency_bindings AS b VALUES (p_lookup_key, p_merchant, p_operation, p_key,
                                                      p_fingerprints[chosen], now_ts)
        ON CONFLICT (lookup_key) DO NOTHING;
        made := FOUND;
        IF NOT made THEN
            SELECT b.fingerprint INTO bound_fp FROM idempotency_bindings b WHERE b.lookup_key = p_lookup_key;
            chosen := array_position(p_fingerprints, bound_fp);
            IF chosen IS NULL THEN
                RETURN QUERY SELECT 'mismatch'::text, 0, 0::bigint, NULL::bytea, false;
                RETURN;
            END IF;
        END IF;
    END IF;
    -- Acquire: counts as a new in-flight record unless a lapsed one of this key is still counted, and as a new record
    -- unless a row of this key is still counted. The merchant's lock makes check and count one step (see above).
    d_in := CASE WHEN found_row AND rec.state = 'in_flight' THEN 0 ELSE 1 END;
    d_rec := CASE WHEN found_row THEN 0 ELSE 1 END;
    IF d_in <> 0 OR d_rec <> 0 THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('quota:' || p_merchant, 0));
        SELECT coalesce(sum(c.in_flight), 0), coalesce(sum(c.records), 0) INTO cur_in, cur_rec
            FROM (SELECT s.in_flight, s.records FROM merchant_quota_slots s WHERE s.merchant = p_merchant
                  UNION ALL
                  SELECT q.in_flight, q.records FROM merchant_quotas q WHERE q.merchant = p_merchant) c;
        IF cur_in + d_in > p_max_in_flight OR cur_rec + d_rec > p_max_records THEN
            IF made THEN
                DELETE FROM idempotency_bindings b WHERE b.lookup_key = p_lookup_key;
            END IF;
            RETURN QUERY SELECT 'over_quota'::text, CASE WHEN cur_in + d_in > p_max_in_flight THEN 1 ELSE 2 END,
                    0::bigint, NULL::bytea, false;
            RETURN;
        END IF;
        PERFORM idempotency_count(p_merchant, d_in, d_rec);
    END IF;
    now_ts := clock_timestamp();
    new_token := greatest((extract(epoch FROM now_ts) * 1000000)::bigint, coalesce(rec.fencing_token, 0) + 1);
    INSERT INTO idempotency_records AS r VALUES (p_lookup_key, p_merchant, p_operation, p_key, p_fingerprints[chosen],
            'in_flight', new_token, now_ts + p_lease_ms * interval '1 millisecond', NULL, NULL,
            now_ts + p_lease_ms * interval '1 millisecond')
    ON CONFLICT (lookup_key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'in_flight',
            fencing_token = excluded.fencing_token, lease_expires_at = excluded.lease_expires_at,
            response_kind = NULL, response_id = NULL, expires_at = excluded.expires_at;
    RETURN QUERY SELECT 'acquired'::text, chosen, new_token, NULL::bytea, made;
END;
$$;

-- V1's claim, for a release that still calls it (it binds the key itself, after the claim).
CREATE OR REPLACE FUNCTION idempotency_claim(p_lookup_key text, p_merchant text, p_operation text, p_key text,
                                             p_fingerprints text[], p_kinds text[], p_ids text[], p_lease_ms bigint,
                                             p_max_in_flight integer, p_max_records integer)
RETURNS TABLE (outcome text, identity integer, token bigint, body bytea)
LANGUAGE sql AS $$
    SELECT c.outcome, c.identity, c.token, c.body
    FROM idempotency_claim_bind(p_lookup_key, p_merchant, p_operation, p_key, p_fingerprints, p_kinds, p_ids,
                                p_lease_ms, p_max_in_flight, p_max_records, false) c;
$$;

-- Record-and-complete, one atomic step, as V1's idempotency_record, with the authorization row as it is since V2
-- (its state, expiry and last change): the decision insert-if-absent, the row with it when given and the decision is
-- new, then the completion of the key if it is IN_FLIGHT with this token or absent. Commits durably.
CREATE FUNCTION idempotency_record_resource(p_lookup_key text, p_merchant text, p_operation text, p_key text,
                                            p_fingerprint text, p_token bigint, p_kind text, p_id text,
                                            p_attempt_id text, p_body bytea, p_retention_ms bigint,
                                            a_id uuid, a_merchant text, a_reference text, a_amount bigint,
                                            a_currency text, a_brand text, a_last_four text, a_status text,
                                            a_decline_code text, a_created_at timestamptz, a_state text,
                                            a_expires_at timestamptz, a_updated_at timestamptz)
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
    now_ts := clock_timestamp();
    INSERT INTO decisions AS x VALUES (p_kind, p_id, p_attempt_id, p_body, now_ts,
                                       now_ts + p_retention_ms * interval '1 millisecond')
    ON CONFLICT (kind, id) DO UPDATE SET attempt_id = excluded.attempt_id, body = excluded.body,
            recorded_at = excluded.recorded_at, expires_at = excluded.expires_at
        WHERE x.expires_at <= now_ts
    RETURNING x.body, x.kind, x.id, x.expires_at INTO w_body, w_kind, w_id, w_expires;
    was_new := FOUND;
    IF NOT was_new THEN
        SELECT x.body, x.kind, x.id, x.expires_at INTO w_body, w_kind, w_id, w_expires
            FROM decisions x WHERE x.kind = p_kind AND x.id = p_id;
    END IF;
    IF was_new AND a_id IS NOT NULL THEN
        INSERT INTO authorizations (id, attempt_id, merchant, reference, amount, currency, brand, last_four, status,
                                    decline_code, created_at, state, expires_at, updated_at)
        VALUES (a_id, p_attempt_id, a_merchant, a_reference, a_amount, a_currency, a_brand, a_last_four, a_status,
                a_decline_code, a_created_at, a_state, a_expires_at, a_updated_at)
        ON CONFLICT DO NOTHING;
    END IF;
    -- The usual case, without the key's lock: the key is still IN_FLIGHT with this token under a live lease. The
    -- row's lock orders it with a claim taking the key over (that claim then finds the decision and replays it).
    UPDATE idempotency_records r SET fingerprint = p_fingerprint, state = 'completed', lease_expires_at = NULL,
            response_kind = w_kind, response_id = w_id, expires_at = w_expires
        WHERE r.lookup_key = p_lookup_key AND r.state = 'in_flight' AND r.fencing_token = p_token
          AND r.expires_at > now_ts;
    IF FOUND THEN
        PERFORM idempotency_count(p_merchant, -1, 0);
        RETURN QUERY SELECT was_new, true, w_body;
        RETURN;
    END IF;
    -- Otherwise under the key's lock, as every claim of the key: taken over (the completion is refused), or absent or
    -- lapsed (completed, and counted anew if absent).
    PERFORM pg_advisory_xact_lock(hashtextextended('idempotency:' || p_lookup_key, 0));
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
