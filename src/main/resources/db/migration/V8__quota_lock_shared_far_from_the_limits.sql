-- One merchant's claims no longer wait for each other's flushes while the merchant is far from its quota.
--
-- Since V6 a claim that adds to a merchant's counts took the merchant's advisory lock (exclusive) and held it until
-- its commit was flushed, so one merchant's claims ran one flush at a time: measured with the staging rolling restart
-- (one merchant, 280 requests/s, PostgreSQL limited to one CPU), claims waited past lock_timeout for that lock, held
-- their pooled connections meanwhile, and the replicas answered 503.
--
-- Now the lock's mode depends on how near the merchant is to a limit, judged from its counts read first without it:
--   far (counts + max_connections <= each limit): the lock in shared mode, which claims far from the limits hold side
--     by side. The counts are read again under it; the claims in progress beside this one, whose counts are not
--     visible yet, are fewer than max_connections (each holds a connection), so the check stays exact. Should the
--     counts have come near a limit between the two reads, the claims in progress are counted where the lock
--     manager lists them (pg_locks, the holders of this lock), which may refuse a claim that a later one would
--     admit, never admit one over the quota;
--   near: the lock in exclusive mode, as before V8: it waits until every holder of the shared lock committed (their
--     counts visible) and lets none in meanwhile, so check and count are one step.
-- A claim is one statement in a transaction of its own (the service calls it so), so a transaction never takes the
-- lock in both modes (no upgrade, so no deadlock between two claims); several claims in one transaction would break
-- the margin's count too. A merchant near
-- its limit runs one claim per flush as before; with the defaults (max_connections 100, max-in-flight 200 in prod)
-- that is a merchant with more than 100 requests in flight.

-- A merchant's counts: the sum of its slots and of what merchant_quotas counted before V6 (0 when it has none).
CREATE FUNCTION idempotency_quota_counts(p_merchant text, OUT in_flight integer, OUT records integer)
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(c.in_flight), 0)::integer, coalesce(sum(c.records), 0)::integer
    FROM (SELECT s.in_flight, s.records FROM merchant_quota_slots s WHERE s.merchant = p_merchant
          UNION ALL
          SELECT q.in_flight, q.records FROM merchant_quotas q WHERE q.merchant = p_merchant) c;
$$;

CREATE OR REPLACE FUNCTION idempotency_claim_bind(p_lookup_key text, p_merchant text, p_operation text, p_key text,
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
    quota_key  bigint;
    margin     integer;
    holders    integer;
    exact      boolean;
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
    -- unless a row of this key is still counted. Check and count under the merchant's quota lock (see above).
    d_in := CASE WHEN found_row AND rec.state = 'in_flight' THEN 0 ELSE 1 END;
    d_rec := CASE WHEN found_row THEN 0 ELSE 1 END;
    IF d_in <> 0 OR d_rec <> 0 THEN
        quota_key := hashtextextended('quota:' || p_merchant, 0);
        margin := current_setting('max_connections')::integer;
        SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
        exact := cur_in + margin > p_max_in_flight OR cur_rec + margin > p_max_records;
        IF exact THEN
            -- Near a limit: alone, once every claim holding the shared lock has committed (its count is visible).
            PERFORM pg_advisory_xact_lock(quota_key);
        ELSE
            -- Far from both limits: beside the other claims far from them; their counts are not visible yet, but
            -- there are fewer of them than max_connections, the margin.
            PERFORM pg_advisory_xact_lock_shared(quota_key);
        END IF;
        SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
        IF NOT exact AND (cur_in + margin > p_max_in_flight OR cur_rec + margin > p_max_records) THEN
            -- Came near a limit since the first look, under the shared lock: the claims in progress are those
            -- holding it (counted first, so that one committing meanwhile counts once or twice, never zero times).
            SELECT count(*) INTO holders FROM pg_locks l
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = ((quota_key >> 32) & 4294967295)::oid AND l.objid = (quota_key & 4294967295)::oid;
            SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
            cur_in := cur_in + holders - 1;
            cur_rec := cur_rec + holders - 1;
        END IF;
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
