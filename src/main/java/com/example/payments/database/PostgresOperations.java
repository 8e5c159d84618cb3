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
import com.example.payments.authorization.AuthorizationState;
import com.example.payments.authorization.AuthorizationStore;
import com.example.payments.authorization.Lifecycle;
import com.example.payments.authorization.OperationRecord;

/**
 * The reserve and settle steps of captures, voids and expiries in PostgreSQL ({@code authorization_operations},
 * migration {@code V3}), each ONE statement in one round trip, with no transaction held open across statements:
 *
 * <ul>
 *     <li><b>Reserve</b>: one conditional {@code UPDATE} of the authorization, its {@code WHERE} the conditions of
 *     {@link Lifecycle#reserve} (state {@code APPROVED}, no void pending; a capture: not expired, fewer captures than
 *     {@code authorization.max-captures}, the same currency, {@code captured + reserved + amount <= amount}; a void:
 *     not expired, no capture pending; an expiry: expired, nothing pending), chained in the same statement to the
 *     {@code INSERT} of the pending operation. Two replicas racing on one authorization serialize on its row for the
 *     length of that statement only; the second re-evaluates the conditions on the row the first committed.</li>
 *     <li><b>Settle</b>: one statement that moves the operation from {@code PENDING} to its outcome and, only when it
 *     did, applies it to the authorization as {@link Lifecycle#settle} does (a success applies the reservation, a
 *     decline returns it), so an operation is settled once however many replicas answer it.</li>
 * </ul>
 *
 * <p>When the write is refused, the same statement returns the authorization as it stood, and {@link Lifecycle}
 * names the refusal (409 or 422). That row is the statement's snapshot, which may predate a commit the statement
 * waited for; when it would have allowed the operation, the statement runs again (at most {@value #ATTEMPTS} times).
 * Two executions of one attempt racing (a lapsed lease) collide on the operation's primary key; the loser's statement
 * is rolled back whole and runs again, and finds the winner's operation.
 */
final class PostgresOperations {

    private static final int ATTEMPTS = 3;
    private static final String UNIQUE_VIOLATION = "23505";
    private static final String OPERATION_COLUMNS = "id, kind, authorization_id, attempt_id, merchant, amount, "
                                                    + "currency, status, decline_code, created_at";
    private static final String NO_OPERATION = "NULL::uuid, NULL, NULL::uuid, NULL, NULL, NULL::bigint, NULL, NULL, "
                                               + "NULL, NULL::timestamptz";

    // Parameters: operation id, kind, authorization id, attempt id, merchant, amount asked, currency asked,
    // max captures, now, the operation's createdAt.
    private static final String RESERVE = """
            WITH p AS (SELECT ?::uuid AS op_id, ?::text AS kind, ?::uuid AS auth_id, ?::text AS attempt_id,
                              ?::text AS merchant, ?::bigint AS asked, ?::text AS currency, ?::int AS max_captures,
                              ?::timestamptz AS now, ?::timestamptz AS created_at),
            existing AS (SELECT o.* FROM authorization_operations o, p WHERE o.id = p.op_id),
            reserved AS (
                UPDATE authorizations a
                   SET reserved_amount = a.reserved_amount + CASE WHEN p.kind = 'capture' THEN p.asked ELSE 0 END,
                       void_pending = a.void_pending OR p.kind <> 'capture',
                       captures = CASE WHEN p.kind = 'capture' THEN array_append(a.captures, p.op_id::text)
                                       ELSE a.captures END
                  FROM p
                 WHERE a.id = p.auth_id AND NOT EXISTS (SELECT 1 FROM existing)
                   AND a.state = 'APPROVED' AND NOT a.void_pending
                   AND CASE p.kind
                       WHEN 'capture' THEN p.now < a.expires_at AND cardinality(a.captures) < p.max_captures
                                           AND a.currency = p.currency
                                           AND a.captured_amount + a.reserved_amount + p.asked <= a.amount
                       WHEN 'void' THEN p.now < a.expires_at AND a.reserved_amount = 0
                       ELSE p.now >= a.expires_at AND a.reserved_amount = 0 END
                RETURNING a.id, a.currency, CASE WHEN p.kind = 'capture' THEN p.asked
                                                 ELSE a.amount - a.captured_amount - a.reserved_amount END AS amount),
            inserted AS (
                INSERT INTO authorization_operations (%1$s)
                SELECT p.op_id, p.kind, r.id, p.attempt_id, p.merchant, r.amount, r.currency, 'PENDING', NULL,
                       p.created_at FROM reserved r, p
                RETURNING %1$s)
            SELECT 'existing', %1$s, NULL, NULL::bigint, NULL, NULL::bigint, NULL::bigint, NULL::boolean, NULL::int,
                   NULL::timestamptz FROM existing
            UNION ALL
            SELECT 'reserved', %1$s, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM inserted
            UNION ALL
            SELECT 'current', %2$s, a.state, a.amount, a.currency, a.captured_amount, a.reserved_amount,
                   a.void_pending, cardinality(a.captures), a.expires_at
              FROM authorizations a, p
             WHERE a.id = p.auth_id AND NOT EXISTS (SELECT 1 FROM existing) AND NOT EXISTS (SELECT 1 FROM inserted)
            """.formatted(OPERATION_COLUMNS, NO_OPERATION);

    // What a settle makes of the authorization, as Lifecycle.settle: the captured amount, then the state.
    private static final String CAPTURED = "(a.captured_amount + CASE WHEN op.kind = 'capture' AND p.ok "
                                           + "THEN op.amount ELSE 0 END)";
    private static final String STATE = "(CASE op.kind WHEN 'capture' THEN CASE WHEN " + CAPTURED + " = a.amount "
                                        + "THEN 'CAPTURED' ELSE a.state END WHEN 'void' THEN CASE WHEN p.ok THEN "
                                        + "'VOIDED' ELSE a.state END ELSE 'EXPIRED' END)";

    // Parameters: operation id, succeeded, decline code, now. The authorization's new position is computed on the row
    // as the UPDATE finds it (the latest committed version), never on the statement's snapshot.
    private static final String SETTLE = """
            WITH p AS (SELECT ?::uuid AS op_id, ?::boolean AS ok, ?::text AS code, ?::timestamptz AS now),
            op AS (
                UPDATE authorization_operations o
                   SET status = CASE WHEN p.ok THEN 'SUCCEEDED' ELSE 'DECLINED' END,
                       decline_code = CASE WHEN p.ok THEN NULL ELSE p.code END, settled_at = p.now
                  FROM p
                 WHERE o.id = p.op_id AND o.status = 'PENDING'
                RETURNING o.*),
            moved AS (
                UPDATE authorizations a
                   SET state = %2$s, captured_amount = %3$s,
                       reserved_amount = a.reserved_amount - CASE WHEN op.kind = 'capture' THEN op.amount ELSE 0 END,
                       void_pending = op.kind = 'capture' AND a.void_pending,
                       updated_at = CASE WHEN %2$s <> a.state OR %3$s <> a.captured_amount THEN p.now
                                         ELSE a.updated_at END
                  FROM op, p
                 WHERE a.id = op.authorization_id
                RETURNING a.id)
            SELECT %1$s FROM op
            UNION ALL
            SELECT %1$s FROM authorization_operations o, p WHERE o.id = p.op_id AND NOT EXISTS (SELECT 1 FROM op)
            """.formatted(OPERATION_COLUMNS, STATE, CAPTURED);

    private PostgresOperations() {
    }

    static AuthorizationStore.Reservation reserve(Connection connection, String authorizationId,
                                                  OperationRecord pending, int maxCaptures, Instant now)
            throws SQLException {
        for (int attempt = 1; ; attempt++) {
            Optional<AuthorizationStore.Reservation> done;
            try {
                done = reserveOnce(connection, authorizationId, pending, maxCaptures, now);
            } catch (SQLException e) {
                if (!UNIQUE_VIOLATION.equals(e.getSQLState()) || attempt == ATTEMPTS) {
                    throw e;
                }
                continue;
            }
            if (done.isPresent()) {
                return done.get();
            }
            if (attempt == ATTEMPTS) {
                throw new SQLException("reserve: the authorization kept changing under " + ATTEMPTS + " attempts");
            }
        }
    }

    // Empty: refused on a snapshot that would have allowed it (a commit the statement waited for); run it again.
    private static Optional<AuthorizationStore.Reservation> reserveOnce(Connection connection, String authorizationId,
            OperationRecord pending, int maxCaptures, Instant now) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(RESERVE)) {
            statement.setObject(1, UUID.fromString(pending.id()));
            statement.setString(2, pending.kind());
            statement.setObject(3, UUID.fromString(authorizationId));
            statement.setString(4, pending.attemptId());
            statement.setString(5, pending.merchantId());
            statement.setLong(6, pending.amount().value());
            statement.setString(7, pending.amount().currency());
            statement.setInt(8, maxCaptures);
            statement.setObject(9, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
            statement.setObject(10, OffsetDateTime.ofInstant(pending.createdAt(), ZoneOffset.UTC));
            try (ResultSet row = statement.executeQuery()) {
                if (!row.next()) {
                    return Optional.of(new AuthorizationStore.NotFound());
                }
                return switch (row.getString(1)) {
                case "existing" -> Optional.of(new AuthorizationStore.Existing(operation(row, 2)));
                case "reserved" -> Optional.of(new AuthorizationStore.Reserved(operation(row, 2)));
                default -> {
                    Lifecycle.Position at = new Lifecycle.Position(AuthorizationState.valueOf(row.getString(12)),
                            row.getLong(13), row.getString(14), row.getLong(15), row.getLong(16), row.getBoolean(17),
                            row.getInt(18), row.getObject(19, OffsetDateTime.class).toInstant());
                    yield switch (Lifecycle.reserve(at, pending.operation(), pending.amount().value(),
                                                    pending.amount().currency(), maxCaptures, now)) {
                    case Lifecycle.Refused refused -> Optional.of(new AuthorizationStore.Refused(refused));
                    case Lifecycle.Allowed allowed -> Optional.empty();
                    };
                }
                };
            }
        }
    }

    static OperationRecord settle(Connection connection, OperationRecord operation, boolean succeeded,
                                  String declineCode, Instant now) throws SQLException {
        for (int attempt = 1; attempt <= 2; attempt++) {
            try (PreparedStatement statement = connection.prepareStatement(SETTLE)) {
                statement.setObject(1, UUID.fromString(operation.id()));
                statement.setBoolean(2, succeeded);
                statement.setString(3, succeeded ? null : declineCode);
                statement.setObject(4, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
                try (ResultSet row = statement.executeQuery()) {
                    if (!row.next()) {
                        return operation;
                    }
                    OperationRecord current = operation(row, 1);
                    // Still PENDING: not settled by this statement, and read on a snapshot that predates the settle
                    // it waited for. The second run reads after it.
                    if (!current.pending() || attempt == 2) {
                        return current;
                    }
                }
            }
        }
        throw new IllegalStateException("unreachable");
    }

    static Optional<OperationRecord> find(Connection connection, String id) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT " + OPERATION_COLUMNS
                + " FROM authorization_operations WHERE id = ?")) {
            statement.setObject(1, UUID.fromString(id));
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? Optional.of(operation(row, 1)) : Optional.empty();
            }
        }
    }

    static List<OperationRecord> pending(Connection connection, String authorizationId) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT " + OPERATION_COLUMNS
                + " FROM authorization_operations WHERE authorization_id = ? AND status = 'PENDING'"
                + " ORDER BY created_at, id")) {
            statement.setObject(1, UUID.fromString(authorizationId));
            try (ResultSet row = statement.executeQuery()) {
                List<OperationRecord> operations = new ArrayList<>(1);
                while (row.next()) {
                    operations.add(operation(row, 1));
                }
                return operations;
            }
        }
    }

    // The OPERATION_COLUMNS from column {@code first} on.
    private static OperationRecord operation(ResultSet row, int first) throws SQLException {
        return new OperationRecord(row.getObject(first, UUID.class).toString(), row.getString(first + 1),
                row.getObject(first + 2, UUID.class).toString(), row.getString(first + 3), row.getString(first + 4),
                new Amount(row.getLong(first + 5), row.getString(first + 6).trim()), row.getString(first + 7),
                row.getString(first + 8), row.getObject(first + 9, OffsetDateTime.class).toInstant());
    }
}
