-- The expiry worker's claim on an expired authorization: one conditional UPDATE sets it for the rows a replica takes
-- (rows another replica holds locked or claimed until later are skipped), so two replicas never expire the same
-- authorization at once. A claim that lapses (its replica died mid-void) lets another replica retry the expiry with
-- the same attempt id. NULL: never claimed.
ALTER TABLE authorizations ADD COLUMN expiry_claimed_until timestamptz;
