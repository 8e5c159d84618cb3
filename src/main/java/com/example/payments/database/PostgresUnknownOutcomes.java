package com.example.payments.database;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.example.payments.authorization.Amount;
import com.example.payments.authorization.Authorization;
import com.example.payments.authorization.UnknownOutcome;
import com.example.payments.authorization.UnknownOutcomes;

/**
 * {@link UnknownOutcomes} in PostgreSQL, the {@code unknown_outcomes} table (migration {@code V4}): shared by every
 * replica and kept across restarts, so the reconciler of any replica resolves what another recorded (and a retry finds
 * the earlier attempts of its request, by resource id: index of migration {@code V7}). One statement
 * per call, each bounded ({@link DatabaseSettings#worstCall()}); a record is an upsert on the attempt id (a retry whose
 * outcome is unknown again moves the deadline).
 */
public final class PostgresUnknownOutcomes implements UnknownOutcomes {

    private static final String COLUMNS = "attempt_id, lookup_key, merchant, fingerprint, resource_id, reference, "
                                          + "amount, currency, brand, last_four, recorded_at, reverse_at";
    private static final String RECORD = "INSERT INTO unknown_outcomes (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, "
                                         + "?, ?, ?, ?, ?) ON CONFLICT (attempt_id) DO UPDATE SET recorded_at = "
                                         + "excluded.recorded_at, reverse_at = excluded.reverse_at";
    private static final String DUE = "SELECT " + COLUMNS + " FROM unknown_outcomes WHERE reverse_at <= ? "
                                      + "ORDER BY reverse_at LIMIT ?";

    private final Database database;

    private PostgresUnknownOutcomes(Database database) {
        this.database = database;
    }

    /**
     * Creates the table's client.
     *
     * @param database the pool (closed by its owner)
     * @return the store
     */
    public static PostgresUnknownOutcomes create(Database database) {
        return new PostgresUnknownOutcomes(database);
    }

    @Override
    public void record(UnknownOutcome o) {
        database.call("record-unknown-outcome", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(RECORD)) {
                statement.setString(1, o.attemptId());
                statement.setString(2, o.lookupKey());
                statement.setString(3, o.merchantId());
                statement.setString(4, o.fingerprint());
                statement.setObject(5, UUID.fromString(o.resourceId()));
                statement.setString(6, o.reference());
                statement.setLong(7, o.amount().value());
                statement.setString(8, o.amount().currency());
                statement.setString(9, o.card().brand());
                statement.setString(10, o.card().last4());
                statement.setObject(11, OffsetDateTime.ofInstant(o.recordedAt(), ZoneOffset.UTC));
                statement.setObject(12, OffsetDateTime.ofInstant(o.reverseAt(), ZoneOffset.UTC));
                return statement.executeUpdate();
            }
        });
    }

    @Override
    public List<UnknownOutcome> due(Instant now, int limit) {
        return database.call("due-unknown-outcomes", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(DUE)) {
                statement.setObject(1, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
                statement.setInt(2, limit);
                List<UnknownOutcome> due = new ArrayList<>();
                try (ResultSet row = statement.executeQuery()) {
                    while (row.next()) {
                        due.add(outcome(row));
                    }
                }
                return due;
            }
        });
    }

    @Override
    public List<UnknownOutcome> ofResource(String resourceId) {
        return database.call("unknown-outcomes-of-resource", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT " + COLUMNS + " FROM unknown_outcomes WHERE resource_id = ?")) {
                statement.setObject(1, UUID.fromString(resourceId));
                List<UnknownOutcome> found = new ArrayList<>();
                try (ResultSet row = statement.executeQuery()) {
                    while (row.next()) {
                        found.add(outcome(row));
                    }
                }
                return found;
            }
        });
    }

    @Override
    public boolean remove(String attemptId) {
        return database.call("remove-unknown-outcome", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(
                    "DELETE FROM unknown_outcomes WHERE attempt_id = ?")) {
                statement.setString(1, attemptId);
                return statement.executeUpdate() == 1;
            }
        });
    }

    @Override
    public long countDueBefore(Instant before) {
        return database.call("count-unknown-outcomes", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT count(*) FROM unknown_outcomes WHERE reverse_at < ?")) {
                statement.setObject(1, OffsetDateTime.ofInstant(before, ZoneOffset.UTC));
                try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    return row.getLong(1);
                }
            }
        });
    }

    private static UnknownOutcome outcome(ResultSet row) throws SQLException {
        return new UnknownOutcome(row.getString(1), row.getString(2), row.getString(3), row.getString(4),
                row.getObject(5, UUID.class).toString(), row.getString(6),
                new Amount(row.getLong(7), row.getString(8)),
                new Authorization.CardSummary(row.getString(9), row.getString(10)),
                row.getObject(11, OffsetDateTime.class).toInstant(),
                row.getObject(12, OffsetDateTime.class).toInstant());
    }
}
