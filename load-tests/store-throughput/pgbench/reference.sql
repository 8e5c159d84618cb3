-- The reference authorization (fixed; see reference-schema.sql): two durable transactions of one statement each, the
-- claim, then the decision and the completion of the claim. No row that two transactions share: nothing waits for
-- another transaction's flush, so the server's group commit and the disk set the rate.
\set n random(1, 9223372036854775806)
INSERT INTO reference_claims VALUES ('ref-' || :client_id || '-' || :n, 'in_flight', now() + interval '10 seconds');
WITH decision AS (INSERT INTO reference_decisions VALUES ('ref-' || :client_id || '-' || :n, convert_to(repeat('x', 400), 'UTF8'), now()))
UPDATE reference_claims SET state = 'completed', expires_at = now() + interval '1 day' WHERE lookup_key = 'ref-' || :client_id || '-' || :n;
