package com.example.payments.database;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.IdempotencyStore;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.Recorded;

/**
 * {@link IdempotencyStore} in PostgreSQL, the system of record: keys, decisions and authorizations in one database
 * shared by every replica, kept across restarts. The tables and the functions each operation calls are created by
 * the migrations ({@code db/migration/V1__idempotency_records_and_authorizations.sql}, and {@code V6} for the
 * quota slots and the functions the store calls now):
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
 * completion of the key). The claim commits asynchronously ({@code synchronous_commit} off for its transaction): a
 * crash of the database may lose it, never the recording after it, which commits durably and with it every claim
 * before it; a lost claim is handled as a lost Redis claim is (the retry sends the same attempt id; a late recording
 * still commits its decision and authorization row, fencing refuses only its completion). A completion refused by
 * the fencing token is not an error. Claims and recordings of one key are serialized by a transaction-scoped
 * advisory lock on the key; claims of one merchant are not serialized: the quota check reads the committed counts,
 * so concurrent claims of one merchant may exceed its quota by at most their number minus one (bounded by the
 * connections of all replicas, {@code docs/backends.md}). Tokens are the database clock in microseconds, or one more
 * than the key's last token. Every call is bounded ({@link DatabaseSettings#worstCall()}).
 *
 * <p>Size: the six store operations, their SQL calls and row mapping implement one contract together.
 */
public final class PostgresIdempotencyStore implements IdempotencyStore {

    private static final String CLAIM = "SELECT outcome, identity, token, body, bound_here FROM "
                                        + "idempotency_claim_bind(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String RECORD = "SELECT inserted, completed, winner FROM idempotency_record_resource(?, ?, ?, "
                                         + "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String RENEW = "UPDATE idempotency_records SET lease_expires_at = clock_timestamp() + ? * "
                                        + "interval '1 millisecond', expires_at = clock_timestamp() + ? * "
                                        + "interval '1 millisecond' WHERE lookup_key = ? AND state = 'in_flight' AND "
                                        + "fencing_token = ? AND expires_at > clock_timestamp()";
    private static final String RELEASE = "SELECT idempotency_release(?, ?)";
    private static final String FIND = "SELECT body FROM decisions WHERE kind = ? AND id = ? AND expires_at > "
                                       + "clock_timestamp()";
    private static final String SWEEP = "SELECT idempotency_sweep(?)";

    private static final System.Logger LOGGER = System.getLogger(PostgresIdempotencyStore.class.getName());

    private final Database database;
    private final Function<Decision, Optional<AuthorizationRow>> authorizations;
    private final boolean bindsKeys;
    private volatile boolean sweepFailing;

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
        return database.call("claim", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(CLAIM)) {
                statement.setString(1, lookupKey);
                statement.setString(2, parts.merchant());
                statement.setString(3, parts.operation());
                statement.setString(4, parts.key());
                statement.setArray(5, array(connection, identities.stream().map(Identity::fingerprint)));
                statement.setArray(6, array(connection, identities.stream().map(i -> i.decision().kind())));
                statement.setArray(7, array(connection, identities.stream().map(i -> i.decision().id())));
                statement.setLong(8, lease.toMillis());
                statement.setInt(9, quota.maxInFlight());
                statement.setInt(10, quota.maxRecords());
                statement.setBoolean(11, bindsKeys);
                try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    int identity = row.getInt(2) - 1;
                    return switch (row.getString(1)) {
                    case "acquired" -> bindsKeys
                            ? new Claim.Acquired(lookupKey, row.getLong(3), identity,
                                                 new KeyBindings.Bound(identity, row.getBoolean(5)))
                            : new Claim.Acquired(lookupKey, row.getLong(3), identity);
                    case "mismatch" -> new Claim.Mismatch();
                    case "in_flight" -> new Claim.InFlight();
                    case "over_quota" -> new Claim.OverQuota(identity == 0 ? Quota.Limit.IN_FLIGHT
                            : Quota.Limit.RECORDS);
                    case "replay", "recovered" -> new Claim.Replay(
                            new Decision(identities.get(identity).decision(), row.getBytes(4)),
                            row.getString(1).equals("recovered"));
                    default -> throw new IllegalStateException("Unexpected claim outcome " + row.getString(1));
                    };
                }
            }
        });
    }

    @Override
    public boolean renew(String lookupKey, long token, Duration lease) {
        return database.call("renew", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(RENEW)) {
                statement.setLong(1, lease.toMillis());
                statement.setLong(2, lease.toMillis());
                statement.setString(3, lookupKey);
                statement.setLong(4, token);
                return statement.executeUpdate() == 1;
            }
        });
    }

    @Override
    public Recorded recordAndComplete(String lookupKey, Identity identity, long token, Decision decision,
                                      Duration retention) {
        LookupKey parts = LookupKey.parse(lookupKey);
        Optional<AuthorizationRow> authorization = authorizations.apply(decision);
        return database.call("record", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(RECORD)) {
                statement.setString(1, lookupKey);
                statement.setString(2, parts.merchant());
                statement.setString(3, parts.operation());
                statement.setString(4, parts.key());
                statement.setString(5, identity.fingerprint());
                statement.setLong(6, token);
                statement.setString(7, decision.key().kind());
                statement.setString(8, decision.key().id());
                statement.setString(9, identity.attemptId());
                statement.setBytes(10, decision.body());
                statement.setLong(11, retention.toMillis());
                authorizationColumns(statement, 12, authorization);
                try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    return new Recorded(new Decision(decision.key(), row.getBytes(3)), row.getBoolean(1),
                                        row.getBoolean(2));
                }
            }
        });
    }

    @Override
    public boolean release(String lookupKey, long token) {
        return database.call("release", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(RELEASE)) {
                statement.setString(1, lookupKey);
                statement.setLong(2, token);
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() && row.getBoolean(1);
                }
            }
        });
    }

    @Override
    public Optional<Decision> findDecision(DecisionKey key) {
        return database.call("find", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(FIND)) {
                statement.setString(1, key.kind());
                statement.setString(2, key.id());
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() ? Optional.of(new Decision(key, row.getBytes(1))) : Optional.empty();
                }
            }
        });
    }

    /**
     * Deletes expired key records and decisions (lapsed leases, and completed ones past their retention), at most
     * {@code batch} of each per statement, so that no statement holds many rows or runs long; repeats while a batch
     * came back full, at most {@code maxBatches} times. Replicas sweep side by side (rows another one holds are
     * skipped). Authorizations are never deleted. Run by the {@code idempotency-sweeper} worker; before the schema is
     * migrated it does nothing.
     *
     * @param batch      rows per statement, e.g. 500
     * @param maxBatches statements per run at most, e.g. 20
     * @return key records deleted
     * @throws UnavailableException when the database cannot be reached
     */
    public int sweep(int batch, int maxBatches) {
        // Not migrated yet, or closed at shutdown while the worker finishes its last run.
        if (!database.migrated() || database.closed()) {
            return 0;
        }
        int total = 0;
        for (int i = 0; i < maxBatches; i++) {
            int deleted = database.call("sweep", connection -> {
                try (PreparedStatement statement = connection.prepareStatement(SWEEP)) {
                    statement.setInt(1, batch);
                    try (ResultSet row = statement.executeQuery()) {
                        return row.next() ? row.getInt(1) : 0;
                    }
                }
            });
            total += deleted;
            if (deleted < batch) {
                break;
            }
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

    private static void authorizationColumns(PreparedStatement statement, int first,
                                             Optional<AuthorizationRow> authorization) throws SQLException {
        if (authorization.isEmpty()) {
            int[] types = {Types.OTHER, Types.VARCHAR, Types.VARCHAR, Types.BIGINT, Types.VARCHAR, Types.VARCHAR,
                           Types.VARCHAR, Types.VARCHAR, Types.VARCHAR, Types.TIMESTAMP_WITH_TIMEZONE, Types.VARCHAR,
                           Types.TIMESTAMP_WITH_TIMEZONE, Types.TIMESTAMP_WITH_TIMEZONE};
            for (int i = 0; i < types.length; i++) {
                statement.setNull(first + i, types[i]);
            }
            return;
        }
        AuthorizationRow row = authorization.get();
        statement.setObject(first, row.id());
        statement.setString(first + 1, row.merchant());
        statement.setString(first + 2, row.reference());
        statement.setLong(first + 3, row.amount());
        statement.setString(first + 4, row.currency());
        statement.setString(first + 5, row.brand());
        statement.setString(first + 6, row.lastFour());
        statement.setString(first + 7, row.status());
        statement.setString(first + 8, row.declineCode());
        statement.setObject(first + 9, row.createdAt().atOffset(java.time.ZoneOffset.UTC));
        statement.setString(first + 10, row.state());
        statement.setObject(first + 11, row.expiresAt().atOffset(java.time.ZoneOffset.UTC));
        statement.setObject(first + 12, row.updatedAt().atOffset(java.time.ZoneOffset.UTC));
    }

    private static Array array(Connection connection, java.util.stream.Stream<String> values) throws SQLException {
        return connection.createArrayOf("text", values.toArray());
    }

    /** The three parts of a lookup key ({@code RequestIdentities.lookupKey}), for the record's own columns. */
    record LookupKey(String operation, String merchant, String key) {

        static LookupKey parse(String lookupKey) {
            String[] parts = new String[3];
            int at = 0;
            for (int i = 0; i < 3; i++) {
                int colon = lookupKey.indexOf(':', at);
                if (colon < 0) {
                    throw new IllegalArgumentException("not a lookup key built by RequestIdentities.lookupKey");
                }
                int length = Integer.parseInt(lookupKey.substring(at, colon));
                parts[i] = lookupKey.substring(colon + 1, colon + 1 + length);
                at = colon + 1 + length + 1;
            }
            return new LookupKey(parts[0], parts[1], parts[2]);
        }
    }
}
