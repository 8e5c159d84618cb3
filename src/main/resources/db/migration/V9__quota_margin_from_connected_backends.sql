-- The margin of the merchant's shared quota lock (V8) is the number of backends connected to this database, read
-- under the lock, instead of the server's max_connections.
--
-- V8 let a merchant's claims hold its quota lock side by side while its counts + max_connections stayed within each
-- limit. With the settings shipped (max_connections 200 in the CloudNativePG cluster, max-in-flight 200) that was
-- never the case, so every claim took the lock exclusively and one merchant ran one claim per flush, as before V8.
-- The claims that can be in progress beside this one are transactions of the backends connected to this database
-- (advisory locks are per database), the fleet's pools: about replicas x database.pool-size, 30 to 110 in prod.
--
-- Why the count read under the lock bounds the claims in progress: a claim holding the shared lock and not yet
-- committed is a backend connected to this database, so it is counted when this claim reads the count after taking
-- the lock; one that committed before the count was read is visible to the counts read after it. So the count is
-- read first, with the statistics snapshot cleared (PostgreSQL otherwise keeps the first one for the transaction),
-- then the counts. A claim admitted earlier in shared mode read its own count, and claims that begin later in shared
-- mode count it: the last one to read its count bounds every claim in progress beside it.
--
-- The quota check is a function of its own (idempotency_quota_admit), so that a later change to it replaces only it.

-- The backends connected to this database now (every backend type; more is only more conservative).
CREATE FUNCTION idempotency_connected_backends() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_stat_clear_snapshot();
    RETURN (SELECT pg_stat_get_db_numbackends(d.oid) FROM pg_database d WHERE d.datname = current_database());
END;
$$;

-- Admits a claim that adds d_in to the merchant's in-flight count and d_rec to its records and counts it, or refuses
-- it: 0 admitted (and counted), 1 over max-in-flight, 2 over max-records. The merchant's advisory lock is taken in
-- shared mode while its counts + the connected backends stay within each limit (claims side by side), exclusively
-- otherwise (one at a time, exact). Held until the transaction ends; one claim per transaction (no upgrade, so no
-- deadlock between two claims).
CREATE FUNCTION idempotency_quota_admit(p_merchant text, p_d_in integer, p_d_rec integer, p_max_in_flight integer,
                                        p_max_records integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    quota_key bigint := hashtextextended('quota:' || p_merchant, 0);
    margin    integer;
    holders   integer;
    cur_in    integer;
    cur_rec   integer;
    exact     boolean;
BEGIN
    margin := idempotency_connected_backends();
    SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
    exact := cur_in + margin > p_max_in_flight OR cur_rec + margin > p_max_records;
    IF exact THEN
        -- Near a limit: alone, once every claim holding the shared lock has committed (its count is visible).
        PERFORM pg_advisory_xact_lock(quota_key);
    ELSE
        -- Far from both limits: beside the other claims far from them, counted among the connected backends.
        PERFORM pg_advisory_xact_lock_shared(quota_key);
        margin := idempotency_connected_backends();
    END IF;
    SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
    IF NOT exact AND (cur_in + margin > p_max_in_flight OR cur_rec + margin > p_max_records) THEN
        -- Came near a limit since the first look, under the shared lock: the claims in progress are those holding it
        -- (counted first, so that one committing meanwhile counts once or twice, never zero times).
        SELECT count(*) INTO holders FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid = ((quota_key >> 32) & 4294967295)::oid AND l.objid = (quota_key & 4294967295)::oid;
        SELECT c.in_flight, c.records INTO cur_in, cur_rec FROM idempotency_quota_counts(p_merchant) c;
        cur_in := cur_in + holders - 1;
        cur_rec := cur_rec + holders - 1;
    END IF;
    IF cur_in + p_d_in > p_max_in_flight THEN
        RETURN 1;
    END IF;
    IF cur_rec + p_d_rec > p_max_records THEN
        RETURN 2;
    END IF;
    PERFORM idempotency_count(p_merchant, p_d_in, p_d_rec);
    RETURN 0;
END;
$$;

-- The claim as in V8, its quota check replaced by idempotency_quota_admit.
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
    bound_fp   text;
    made       boolean := false;
    new_token  bigint;
    chosen     integer;
    over       integer;
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
    -- unless a row of this key is still counted. Checked and counted by idempotency_quota_admit.
    d_in := CASE WHEN found_row AND rec.state = 'in_flight' THEN 0 ELSE 1 END;
    d_rec := CASE WHEN found_row THEN 0 ELSE 1 END;
    IF d_in <> 0 OR d_rec <> 0 THEN
        over := idempotency_quota_admit(p_merchant, d_in, d_rec, p_max_in_flight, p_max_records);
        IF over <> 0 THEN
            IF made THEN
                DELETE FROM idempotency_bindings b WHERE b.lookup_key = p_lookup_key;
            END IF;
            RETURN QUERY SELECT 'over_quota'::text, over, 0::bigint, NULL::bytea, false;
            RETURN;
        END IF;
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
