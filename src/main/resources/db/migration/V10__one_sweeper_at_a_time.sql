-- One replica sweeps at a time.
--
-- Since V1 every replica's idempotency-sweeper ran idempotency_sweep every second, side by side (rows another one
-- held were skipped). On a database short of CPU after a burst of inserts (measured in the staging rolling restart:
-- PostgreSQL limited to one CPU, 10 minutes of retention after a 12-minute peak search), the replicas' sweeps ran
-- together, each past statement_timeout, and each rolled back: 471 sweeps failed in one run, their CPU spent on
-- nothing while the requests waited for the same CPU. Now a sweep first takes a transaction-scoped advisory lock
-- without waiting (pg_try_advisory_xact_lock); the replicas that do not get it return 0 at once, and the service's
-- sweeper stops its run (a batch that comes back short ends it). The service also halves its batch after a failed
-- sweep (PostgresIdempotencyStore.sweep).
--
-- As in V1: deletes at most p_batch expired key rows and p_batch expired decisions, skipping rows another
-- transaction holds, and uncounts the rows from their merchants in merchant order. Returns the key rows deleted.
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
