package com.example.payments.database;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.authorization.Amount;
import com.example.payments.authorization.AuthorizationRecord;
import com.example.payments.authorization.AuthorizationStore;
import com.example.payments.authorization.Lifecycle;
import com.example.payments.authorization.OperationRecord;

/**
 * The reserve and settle steps of captures and voids in PostgreSQL ({@code authorization_operations}, migration
 * {@code V3}): each one short transaction that takes the authorization's row lock first, so that two replicas
 * racing on one authorization run one after the other and each decides on what the other committed
 * ({@link Lifecycle} decides).
 */
final class PostgresOperations {

    private static final String OPERATION_COLUMNS = "id, kind, authorization_id, attempt_id, merchant, amount, "
                                                    + "currency, status, decline_code, created_at";
    private static final String LOCK = PostgresAuthorizationStore.SELECT + " FOR UPDATE";
    private static final String UPDATE = "UPDATE authorizations SET state = ?, captured_amount = ?, reserved_amount = "
                                         + "?, void_pending = ?, captures = ?, updated_at = ? WHERE id = ?";
    private static final String INSERT = "INSERT INTO authorization_operations (" + OPERATION_COLUMNS + ") VALUES "
                                         + "(?, ?, ?, ?, ?, ?, ?, 'PENDING', NULL, ?)";
    private static final String SETTLE = "UPDATE authorization_operations SET status = ?, decline_code = ?, "
                                         + "settled_at = ? WHERE id = ?";

    private PostgresOperations() {
    }

    @FunctionalInterface
    interface Work<T> {
        T run() throws SQLException;
    }

    static <T> T inTransaction(Connection connection, Work<T> work) throws SQLException {
        connection.setAutoCommit(false);
        try {
            T result = work.run();
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    static AuthorizationStore.Reservation reserve(Connection connection, String authorizationId,
                                                  OperationRecord pending, int maxCaptures, Instant now)
            throws SQLException {
        // Before the lock, which every capture of the authorization queues on: a retry finds its operation without
        // waiting. Two executions of one attempt racing past it (a lapsed lease) collide on the operation's primary
        // key, and the loser's retry finds the winner's.
        Optional<OperationRecord> existing = find(connection, pending.id(), false);
        if (existing.isPresent()) {
            return new AuthorizationStore.Existing(existing.get());
        }
        Optional<AuthorizationRecord> locked = lock(connection, authorizationId);
        if (locked.isEmpty()) {
            return new AuthorizationStore.NotFound();
        }
        AuthorizationRecord authorization = locked.get();
        boolean capture = pending.kind().equals(OperationRecord.CAPTURE);
        Lifecycle.Position at = authorization.position();
        return switch (Lifecycle.reserve(at, pending.operation(), pending.amount().value(),
                                         pending.amount().currency(), maxCaptures, now)) {
        case Lifecycle.Refused refused -> new AuthorizationStore.Refused(refused);
        case Lifecycle.Allowed allowed -> {
            Lifecycle.Position reserved = new Lifecycle.Position(at.state(), at.amount(), at.currency(),
                    at.captured(), at.reserved() + (capture ? allowed.amount() : 0), at.voidPending() || !capture,
                    at.captures(), at.expiresAt());
            List<String> captures = new ArrayList<>(authorization.captures());
            if (capture) {
                captures.add(pending.id());
            }
            update(connection, authorization.moved(reserved, captures, now));
            OperationRecord operation = new OperationRecord(pending.id(), pending.kind(), authorizationId,
                    pending.attemptId(), pending.merchantId(), new Amount(allowed.amount(), at.currency()),
                    "PENDING", null, pending.createdAt());
            insert(connection, operation);
            yield new AuthorizationStore.Reserved(operation);
        }
        };
    }

    static OperationRecord settle(Connection connection, OperationRecord operation, boolean succeeded,
                                  String declineCode, Instant now) throws SQLException {
        AuthorizationRecord authorization = lock(connection, operation.authorizationId()).orElseThrow(
                () -> new IllegalStateException("an operation without its authorization"));
        OperationRecord current = find(connection, operation.id(), true).orElse(operation);
        if (!current.pending()) {
            return current;
        }
        Lifecycle.Position settled = Lifecycle.settle(authorization.position(), current.operation(),
                                                      current.amount().value(), succeeded);
        update(connection, authorization.moved(settled, authorization.captures(), now));
        OperationRecord done = current.settled(succeeded, declineCode);
        try (PreparedStatement statement = connection.prepareStatement(SETTLE)) {
            statement.setString(1, done.status());
            statement.setString(2, done.declineCode());
            statement.setObject(3, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
            statement.setObject(4, UUID.fromString(done.id()));
            statement.executeUpdate();
        }
        return done;
    }

    static Optional<OperationRecord> find(Connection connection, String id, boolean forUpdate) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT " + OPERATION_COLUMNS
                + " FROM authorization_operations WHERE id = ?" + (forUpdate ? " FOR UPDATE" : ""))) {
            statement.setObject(1, UUID.fromString(id));
            try (ResultSet row = statement.executeQuery()) {
                if (!row.next()) {
                    return Optional.empty();
                }
                return Optional.of(new OperationRecord(row.getObject(1, UUID.class).toString(), row.getString(2),
                        row.getObject(3, UUID.class).toString(), row.getString(4), row.getString(5),
                        new Amount(row.getLong(6), row.getString(7)), row.getString(8), row.getString(9),
                        row.getObject(10, OffsetDateTime.class).toInstant()));
            }
        }
    }

    private static Optional<AuthorizationRecord> lock(Connection connection, String id) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(LOCK)) {
            statement.setObject(1, UUID.fromString(id));
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? Optional.of(PostgresAuthorizationStore.record(row)) : Optional.empty();
            }
        }
    }

    private static void update(Connection connection, AuthorizationRecord a) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(UPDATE)) {
            statement.setString(1, a.state().name());
            statement.setLong(2, a.capturedAmount());
            statement.setLong(3, a.reservedAmount());
            statement.setBoolean(4, a.voidPending());
            statement.setArray(5, connection.createArrayOf("text", a.captures().toArray()));
            statement.setObject(6, OffsetDateTime.ofInstant(a.updatedAt(), ZoneOffset.UTC));
            statement.setObject(7, UUID.fromString(a.id()));
            statement.executeUpdate();
        }
    }

    private static void insert(Connection connection, OperationRecord o) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(INSERT)) {
            statement.setObject(1, UUID.fromString(o.id()));
            statement.setString(2, o.kind());
            statement.setObject(3, UUID.fromString(o.authorizationId()));
            statement.setString(4, o.attemptId());
            statement.setString(5, o.merchantId());
            statement.setLong(6, o.amount().value());
            statement.setString(7, o.amount().currency());
            statement.setObject(8, OffsetDateTime.ofInstant(o.createdAt(), ZoneOffset.UTC));
            statement.executeUpdate();
        }
    }
}
