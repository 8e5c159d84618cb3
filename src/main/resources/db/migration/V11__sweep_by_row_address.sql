-- The sweep deletes the rows it locked by their row address, whatever plan PostgreSQL caches for it.
--
-- Since V1 the sweep deleted "WHERE key IN (SELECT key ... ORDER BY expires_at LIMIT p_batch FOR UPDATE SKIP
-- LOCKED)". A PL/pgSQL function's statements get a generic plan after their fifth run, and in the generic plan the
-- limit is a parameter the planner cannot see: it joined the batch to the whole table with a hash semi join over a
-- sequential scan (EXPLAIN ANALYZE with plan_cache_mode = force_generic_plan: 225 ms for a batch of 500 out of
-- 300,000 decisions, against 6 ms with the batch's own plan; 41 ms for the key rows). Measured in the staging
-- rolling restart: once the 10 minutes of retention had passed, the delete of decisions ran past statement_timeout
-- 109 times in one run on a database limited to one CPU, and its cost grew with the table. Now each delete takes
-- the row addresses (ctid) of the rows its subquery locked: a TID scan of the batch (7 ms above, the generic plan
-- too). The addresses cannot change in between: the rows are locked by this statement until the transaction ends.
--
-- Otherwise as in V10: one replica sweeps at a time; deletes at most p_batch expired key rows and p_batch expired
-- decisions, skipping rows another transaction holds, and uncounts the rows from their merchants in merchant order.
-- Returns the key rows deleted.
CREATE OR REPLACE FUNCTION idempotency_sweep(p_batch integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    merchants  text[];
    in_flight  integer[];
    total      integer[];
    deleted    integer := 0;
BEGIN
    -- Another replica is sweeping: nothing to do until its transaction ends.
    IF NOT pg_try_advisory_xact_lock(hashtextextended('idempotency:sweep', 0)) THEN
        RETURN 0;
    END IF;
    WITH gone AS (
        DELETE FROM idempotency_records r WHERE r.ctid = ANY (ARRAY(
            SELECT s.ctid FROM idempotency_records s WHERE s.expires_at <= clock_timestamp()
            ORDER BY s.expires_at LIMIT p_batch FOR UPDATE SKIP LOCKED))
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
    DELETE FROM decisions x WHERE x.ctid = ANY (ARRAY(
        SELECT y.ctid FROM decisions y WHERE y.expires_at <= clock_timestamp()
        ORDER BY y.expires_at LIMIT p_batch FOR UPDATE SKIP LOCKED));
    RETURN deleted;
END;
$$;
