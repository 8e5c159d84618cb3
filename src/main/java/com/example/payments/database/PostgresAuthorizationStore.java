package com.example.payments.database;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.authorization.Amount;
import com.example.payments.authorization.Authorization;
import com.example.payments.authorization.AuthorizationRecord;
import com.example.payments.authorization.AuthorizationState;
import com.example.payments.authorization.AuthorizationStore;
import com.example.payments.authorization.OperationRecord;

/**
 * {@link AuthorizationStore} in PostgreSQL, the system of record: the {@code authorizations} table (migrations
 * {@code V1}, {@code V2}, and {@code V5} for the expiry worker's claims), shared by every replica, kept across
 * restarts, never deleted by the service. A create is one {@code INSERT ... ON CONFLICT DO NOTHING} followed, when
 * another execution of the attempt won, by a read of the winner (with the postgres backend the row is written by the
 * recording of its decision instead, {@link #writtenWithDecisions}); a find is one {@code SELECT} by id; the reserve
 * and settle steps of captures, voids and expiries are one statement each ({@link PostgresOperations}); the expiry
 * worker's claim is one {@code UPDATE ... FOR UPDATE SKIP LOCKED ... RETURNING}. Every call is bounded
 * ({@link DatabaseSettings#worstCall()}).
 */
public final class PostgresAuthorizationStore implements AuthorizationStore {

    private static final String COLUMNS = "id, attempt_id, merchant, reference, amount, currency, brand, last_four, "
                                          + "status, decline_code, created_at, state, captured_amount, captures, "
                                          + "expires_at, updated_at, reserved_amount, void_pending";
    private static final String INSERT = "INSERT INTO authorizations (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, "
                                         + "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
    private static final String FIND = "SELECT " + COLUMNS + " FROM authorizations WHERE id = ?";

    // The expiry worker's claim, one statement: rows another replica holds locked (claiming them now) or claimed
    // until after now are skipped; the others are claimed until now + lease.
    // Parameters: claimed until, now, now, limit.
    private static final String CLAIM_EXPIRED = "UPDATE authorizations SET expiry_claimed_until = ? WHERE id IN ("
            + "SELECT id FROM authorizations WHERE state = 'APPROVED' AND expires_at <= ? AND (expiry_claimed_until "
            + "IS NULL OR expiry_claimed_until <= ?) ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING "
            + COLUMNS;

    private final Database database;
    private final boolean writtenWithDecisions;

    private PostgresAuthorizationStore(Database database, boolean writtenWithDecisions) {
        this.database = database;
        this.writtenWithDecisions = writtenWithDecisions;
    }

    /**
     * Creates the store.
     *
     * @param database the pool (closed by its owner, not by this store)
     * @return the store
     */
    public static PostgresAuthorizationStore create(Database database) {
        return new PostgresAuthorizationStore(database, false);
    }

    /**
     * Creates the store of the postgres backend, whose new authorizations are written by the recording of their
     * decisions ({@link PostgresIdempotencyStore#systemOfRecord}): one transaction, one WAL flush, for the row, the
     * decision and the completion of the key. Its {@link #create} writes nothing and returns the record as given:
     * the recording inserts it if its decision is new, and a replay answers the decision recorded first.
     *
     * @param database the pool (closed by its owner, not by this store)
     * @return the store
     */
    public static PostgresAuthorizationStore writtenWithDecisions(Database database) {
        return new PostgresAuthorizationStore(database, true);
    }

    @Override
    public AuthorizationRecord create(AuthorizationRecord a) {
        if (writtenWithDecisions) {
            return a;
        }
        boolean inserted = database.call("create-authorization", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(INSERT)) {
                statement.setObject(1, UUID.fromString(a.id()));
                statement.setString(2, a.attemptId());
                statement.setString(3, a.merchantId());
                statement.setString(4, a.reference());
                statement.setLong(5, a.amount().value());
                statement.setString(6, a.amount().currency());
                statement.setString(7, a.card().brand());
                statement.setString(8, a.card().last4());
                statement.setString(9, a.status());
                statement.setString(10, a.declineCode());
                statement.setObject(11, OffsetDateTime.ofInstant(a.createdAt(), ZoneOffset.UTC));
                statement.setString(12, a.state().name());
                statement.setLong(13, a.capturedAmount());
                statement.setArray(14, connection.createArrayOf("text", a.captures().toArray()));
                statement.setObject(15, OffsetDateTime.ofInstant(a.expiresAt(), ZoneOffset.UTC));
                statement.setObject(16, OffsetDateTime.ofInstant(a.updatedAt(), ZoneOffset.UTC));
                statement.setLong(17, a.reservedAmount());
                statement.setBoolean(18, a.voidPending());
                return statement.executeUpdate() == 1;
            }
        });
        if (inserted) {
            return a;
        }
        // Another execution of the attempt wrote it first (the same record, unless its state moved on since).
        return find(a.id()).orElseThrow(() -> new IllegalStateException("authorization " + a.id()
                                                                          + " conflicted but is not found"));
    }

    @Override
    public boolean writtenByRecordings() {
        return writtenWithDecisions;
    }

    @Override
    public Optional<AuthorizationRecord> find(String id) {
        return database.call("find-authorization", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(FIND)) {
                statement.setObject(1, UUID.fromString(id));
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() ? Optional.of(record(row)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public Reservation reserve(String authorizationId, OperationRecord pending, int maxCaptures, Instant now) {
        return database.call("reserve", connection -> PostgresOperations.reserve(connection, authorizationId, pending,
                                                                                 maxCaptures, now));
    }

    @Override
    public OperationRecord settle(OperationRecord operation, boolean succeeded, String declineCode, Instant now) {
        return database.call("settle", connection -> PostgresOperations.settle(connection, operation, succeeded,
                                                                               declineCode, now));
    }

    @Override
    public List<AuthorizationRecord> claimExpired(Instant now, int limit, java.time.Duration lease) {
        return database.call("claim-expired", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(CLAIM_EXPIRED)) {
                statement.setObject(1, OffsetDateTime.ofInstant(now.plus(lease), ZoneOffset.UTC));
                statement.setObject(2, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
                statement.setObject(3, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
                statement.setInt(4, limit);
                List<AuthorizationRecord> claimed = new java.util.ArrayList<>();
                try (ResultSet row = statement.executeQuery()) {
                    while (row.next()) {
                        claimed.add(record(row));
                    }
                }
                claimed.sort(java.util.Comparator.comparing(AuthorizationRecord::expiresAt));
                return claimed;
            }
        });
    }

    @Override
    public List<OperationRecord> pendingOperations(String authorizationId) {
        return database.call("pending-operations", connection -> PostgresOperations.pending(connection,
                                                                                              authorizationId));
    }

    @Override
    public Optional<OperationRecord> findOperation(String id) {
        return database.call("find-operation", connection -> PostgresOperations.find(connection, id));
    }

    /**
     * Maps a row selected with {@link #COLUMNS}, in that order.
     *
     * @param row the row
     * @return the record
     * @throws SQLException when the row cannot be read
     */
    static AuthorizationRecord record(ResultSet row) throws SQLException {
        Array captures = row.getArray(14);
        List<String> ids = captures == null ? List.of() : Arrays.asList((String[]) captures.getArray());
        return new AuthorizationRecord(row.getObject(1, UUID.class).toString(), row.getString(2), row.getString(3),
                row.getString(4), new Amount(row.getLong(5), row.getString(6)),
                new Authorization.CardSummary(row.getString(7), row.getString(8)), row.getString(9),
                row.getString(10), row.getObject(11, OffsetDateTime.class).toInstant(),
                AuthorizationState.valueOf(row.getString(12)), row.getLong(13), row.getLong(17), row.getBoolean(18), ids,
                row.getObject(15, OffsetDateTime.class).toInstant(),
                row.getObject(16, OffsetDateTime.class).toInstant());
    }
}
