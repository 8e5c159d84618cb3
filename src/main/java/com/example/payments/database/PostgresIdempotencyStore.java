package com.example.payments.database;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.Recorded;

/**
 * {@link IdempotencyStore} in PostgreSQL, the system of record: keys, decisions and authorizations in one database
 * shared by every replica, kept across restarts. The tables and the functions each operation calls are created by
 * the migrations ({@code db/migration/V1__idempotency_records_and_authorizations.sql}, {@code V6} for the
 * quota slots and the functions the store calls now, {@code V8} and {@code V9} for the quota lock's modes):
 * <ul>
 *     <li>{@code idempotency_records}: one row per key with merchant, operation, key, fingerprint, state, fencing
 *     token, lease expiry, the stored response (a row of {@code decisions}) and expiry;</li>
 *     <li>{@code decisions}: the recorded bodies, insert-if-absent, kept for {@code idempotency.retention};</li>
 *     <li>{@code authorizations}: id, attempt id (unique), merchant, amount, currency, brand, last four, status,
 *     decline code, created, state, expiry; written in the same transaction as its decision and never deleted by the
 *     service;</li>
 *     <li>{@code merchant_quota_slots}: per-merchant counts spread over up to 32 rows, changed in the same
 *     transaction as the records they count (the view {@code merchant_quota_counts} sums them).</li>
 * </ul>
 *
 * <p>Each operation is one statement, a call of a PL/pgSQL function that runs as one transaction: one round trip
 * for the claim (claim-or-recover: mismatch, else a recorded decision, else in flight, else the key's binding, else
 * the merchant's quota, else acquire) and one for the recording (the decision, its authorization row and the
 * completion of the key), each committed durably: the claim writes the key's binding to its request and the
 * merchant's in-flight count, which a crash must not lose (another body under the key would be authorized too). A
 * completion refused by the fencing token is not an error. Claims and recordings of one key are serialized by a
 * transaction-scoped advisory lock on the key; a claim that adds to a merchant's counts takes the merchant's advisory
 * lock, in shared mode while the merchant is far from its limits by more than the backends connected to the
 * database (its claims run side by side) and exclusive near them, so the quota is exact across replicas (counts
 * spread over slot rows, migrations V6, V8 and V9;
 * {@code docs/backends.md}). Tokens are the database clock in microseconds, or one more
 * than the key's last token. Every call is bounded ({@link DatabaseSettings#worstCall()}).
 *
 * <p>This class is the store's operations: which statement each runs through {@link Database#call} (its name in the
 * statement metrics), and the sweep's batching and logging; the SQL, its parameters and row mapping are
 * {@link PostgresIdempotencySql}'s.
 */
public final class PostgresIdempotencyStore implements IdempotencyStore {

    private static final System.Logger LOGGER = System.getLogger(PostgresIdempotencyStore.class.getName());
    private static final int MIN_SWEEP_BATCH = 10;

    private final Database database;
    private final Function<Decision, Optional<AuthorizationRow>> authorizations;
    private final boolean bindsKeys;
    private volatile boolean sweepFailing;
    // Halvings of the sweep's batch now: one more when a statement fails (e.g. statement_timeout), one less after a
    // full one (relative, so that it holds for any batch asked for).
    private volatile int sweepHalvings;

    private PostgresIdempotencyStore(Database database, Function<Decision, Optional<AuthorizationRow>> authorizations,
                                     boolean bindsKeys) {
        this.database = database;
        this.authorizations = authorizations;
        this.bindsKeys = bindsKeys;
    }

    /**
     * Creates the store.
     *
     * @param database       the pool (closed by its owner, not by this store)
     * @param authorizations the {@code authorizations} row of a decision, written in the transaction that records
     *                       it; empty for decisions of other kinds
     * @return the store
     */
    public static PostgresIdempotencyStore create(Database database,
                                                  Function<Decision, Optional<AuthorizationRow>> authorizations) {
        return new PostgresIdempotencyStore(database, authorizations, false);
    }

    /**
     * Creates the store of the postgres backend, where it is also the system of record: each claim that acquires a
     * key binds it too ({@code idempotency_bindings}, as {@link PostgresKeyBindings} does; the acquisition carries
     * the binding, so no second round trip is needed), and each authorization decision is recorded together with its
     * {@code authorizations} row, read from the decision's body.
     *
     * @param database the pool (closed by its owner, not by this store)
     * @param validity {@code authorization.validity}: the expiry of a declined authorization's row
     * @return the store
     */
    public static PostgresIdempotencyStore systemOfRecord(Database database, Duration validity) {
        return new PostgresIdempotencyStore(database, decision -> AuthorizationRow.of(decision, validity), true);
    }

    @Override
    public Claim claim(String lookupKey, List<Identity> identities, Duration lease, Quota quota) {
        LookupKey parts = LookupKey.parse(lookupKey);
        return database.call("claim", connection -> PostgresIdempotencySql.claim(connection, lookupKey, parts,
                                                                                 identities, lease, quota, bindsKeys));
    }

    @Override
    public boolean renew(String lookupKey, long token, Duration lease) {
        return database.call("renew", connection -> PostgresIdempotencySql.renew(connection, lookupKey, token, lease));
    }

    @Override
    public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                      Duration retention) {
        LookupKey parts = LookupKey.parse(lookupKey);
        Optional<AuthorizationRow> authorization = authorizations.apply(decision);
        return database.call("record", connection -> PostgresIdempotencySql.record(connection, lookupKey, parts,
                identity, token, decision, retention, authorization));
    }

    @Override
    public boolean release(String lookupKey, long token) {
        return database.call("release", connection -> PostgresIdempotencySql.release(connection, lookupKey, token));
    }

    @Override
    public Optional<Decision> findDecision(DecisionKey key) {
        return database.call("find", connection -> PostgresIdempotencySql.find(connection, key));
    }

    /**
     * Deletes expired key records and decisions (lapsed leases, and completed ones past their retention), at most
     * {@code batch} of each per statement, so that no statement holds many rows or runs long; repeats while a batch
     * came back full, at most {@code maxBatches} times. One replica sweeps at a time (migration V10: the others' calls
     * return at once); each delete finds its batch by row address, whatever plan PostgreSQL caches (V11). A
     * statement that fails, usually on {@code database.statement-timeout} when the database is short of CPU after a
     * burst of inserts, halves the rows per statement for the next ones (down to
     * 10), and each full statement after that doubles them back up to {@code batch}: a failed
     * statement is rolled back, so repeating it at the same size would spend the database's CPU on nothing, every
     * second, until the load went. Authorizations are never deleted. Run by the {@code idempotency-sweeper} worker;
     * before the schema is migrated it does nothing.
     *
     * @param batch      rows per statement at most, e.g. 500
     * @param maxBatches statements per run at most, e.g. 20
     * @return key records deleted
     * @throws UnavailableException when the database cannot be reached or a statement failed
     */
    public int sweep(int batch, int maxBatches) {
        // Not migrated yet, or closed at shutdown while the worker finishes its last run.
        if (!database.migrated() || database.closed()) {
            return 0;
        }
        int total = 0;
        for (int i = 0; i < maxBatches; i++) {
            int halvings = sweepHalvings;
            int size = Math.max(Math.min(batch, MIN_SWEEP_BATCH), batch >> halvings);
            int deleted;
            try {
                deleted = database.call("sweep", connection -> PostgresIdempotencySql.sweep(connection, size));
            } catch (UnavailableException e) {
                if (size > MIN_SWEEP_BATCH) {
                    sweepHalvings = halvings + 1;
                }
                throw e;
            }
            total += deleted;
            if (deleted < size) {
                break;
            }
            sweepHalvings = Math.max(0, halvings - 1);
        }
        return total;
    }

    /**
     * {@link #sweep(int, int)} for the {@code idempotency-sweeper} worker: a database that cannot be reached is
     * logged once when the sweeps start failing and once when they succeed again (readiness reports the outage), not
     * every second.
     *
     * @param batch      rows per statement
     * @param maxBatches statements per run at most
     */
    public void sweepQuietly(int batch, int maxBatches) {
        try {
            sweep(batch, maxBatches);
            if (sweepFailing) {
                sweepFailing = false;
                LOGGER.log(System.Logger.Level.INFO, "Retention sweep of the database works again");
            }
        } catch (UnavailableException e) {
            if (!sweepFailing) {
                sweepFailing = true;
                LOGGER.log(System.Logger.Level.WARNING, "Retention sweep of the database failed, retrying every run: "
                                                        + e.getMessage());
            }
        }
    }
}
