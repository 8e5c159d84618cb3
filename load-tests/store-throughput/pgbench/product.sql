-- POST /v1/authorizations as the service sends it to PostgreSQL (PostgresIdempotencyStore): the claim (which binds
-- the key and counts it for the merchant, committed durably), then the recording of the decision with its
-- authorization row (committed durably). Merchant m_lt_1 .. m_lt_<merchants> (pgbench -D merchants=N): 1 is one
-- merchant alone. Needs the service's schema (the service migrated it).
\set n random(1, 9223372036854775806)
\set m random(1, :merchants)
SELECT token AS claim_token FROM idempotency_claim_bind('9:authorize:' || length('m_lt_' || :m) || ':m_lt_' || :m || ':' || length('k' || :client_id || '-' || :n) || ':k' || :client_id || '-' || :n, 'm_lt_' || :m, 'authorize', 'k' || :client_id || '-' || :n, ARRAY['fp' || :n], ARRAY['authorization'], ARRAY['d' || :n], 10000, 1000000, 100000000, true)
\gset
SELECT inserted FROM idempotency_record_resource('9:authorize:' || length('m_lt_' || :m) || ':m_lt_' || :m || ':' || length('k' || :client_id || '-' || :n) || ':k' || :client_id || '-' || :n, 'm_lt_' || :m, 'authorize', 'k' || :client_id || '-' || :n, 'fp' || :n, :claim_token, 'authorization', 'd' || :n, 'a' || :n, convert_to(repeat('x', 400), 'UTF8'), 86400000, gen_random_uuid(), 'm_lt_' || :m, 'bench', 1299, 'EUR', 'visa', '1111', 'APPROVED', NULL, now(), 'APPROVED', now() + interval '7 days', now());
