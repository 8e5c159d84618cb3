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

import com.example.payments.idempotency.Claim;
import com.example.payments.idempotency.Decision;
import com.example.payments.idempotency.DecisionKey;
import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.KeyBindings;
import com.example.payments.idempotency.Quota;
import com.example.payments.idempotency.Recorded;

/**
 * The SQL of {@link PostgresIdempotencyStore}: each operation's statement (a call of a PL/pgSQL function the
 * migrations create, or one plain statement), how its parameters are bound and how its row maps to the store's
 * result. Each method runs one statement on a connection that {@link Database#call} lends; which operation runs, and
 * its name in the statement metrics, is the store's.
 */
final class PostgresIdempotencySql {

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

    private PostgresIdempotencySql() {
    }

    /**
     * Claims a key ({@code idempotency_claim_bind}): claim-or-recover, and the key's binding when the store binds keys.
     *
     * @param connection a pooled connection
     * @param lookupKey  the key record's lookup key
     * @param parts      its merchant, operation and key
     * @param identities the request's identities, the fingerprint and decision key of each
     * @param lease      the lease of an acquired key, in ms
     * @param quota      the merchant's quota
     * @param bindsKeys  whether an acquisition binds the key too ({@code idempotency_bindings})
     * @return the claim's outcome
     * @throws SQLException from the driver
     */
    static Claim claim(Connection connection, String lookupKey, LookupKey parts, List<Identity> identities,
                       Duration lease, Quota quota, boolean bindsKeys) throws SQLException {
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
    }

    /**
     * Renews a lease held with the token.
     *
     * @param connection a pooled connection
     * @param lookupKey  the key record's lookup key
     * @param token      the fencing token of the claim
     * @param lease      the new lease from now, in ms
     * @return {@code false} when the key is no longer in flight with this token
     * @throws SQLException from the driver
     */
    static boolean renew(Connection connection, String lookupKey, long token, Duration lease) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(RENEW)) {
            statement.setLong(1, lease.toMillis());
            statement.setLong(2, lease.toMillis());
            statement.setString(3, lookupKey);
            statement.setLong(4, token);
            return statement.executeUpdate() == 1;
        }
    }

    /**
     * Records a decision, its {@code authorizations} row if any, and completes the key
     * ({@code idempotency_record_resource}).
     *
     * @param connection    a pooled connection
     * @param lookupKey     the key record's lookup key
     * @param parts         its merchant, operation and key
     * @param identity      the identity the claim acquired
     * @param token         the fencing token of the claim
     * @param decision      the decision and its body
     * @param retention     how long the decision is kept, in ms
     * @param authorization the decision's {@code authorizations} row; empty for decisions of other kinds
     * @return the decision that won, whether it was inserted and whether the key was completed
     * @throws SQLException from the driver
     */
    static Recorded record(Connection connection, String lookupKey, LookupKey parts, Identity identity, long token,
                           Decision decision, Duration retention, Optional<AuthorizationRow> authorization)
            throws SQLException {
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
    }

    /**
     * Releases a key held with the token ({@code idempotency_release}).
     *
     * @param connection a pooled connection
     * @param lookupKey  the key record's lookup key
     * @param token      the fencing token of the claim
     * @return {@code true} when the key was released
     * @throws SQLException from the driver
     */
    static boolean release(Connection connection, String lookupKey, long token) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(RELEASE)) {
            statement.setString(1, lookupKey);
            statement.setLong(2, token);
            try (ResultSet row = statement.executeQuery()) {
                return row.next() && row.getBoolean(1);
            }
        }
    }

    /**
     * Reads a decision that has not expired.
     *
     * @param connection a pooled connection
     * @param key        the decision's kind and id
     * @return the decision, or empty
     * @throws SQLException from the driver
     */
    static Optional<Decision> find(Connection connection, DecisionKey key) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(FIND)) {
            statement.setString(1, key.kind());
            statement.setString(2, key.id());
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? Optional.of(new Decision(key, row.getBytes(1))) : Optional.empty();
            }
        }
    }

    /**
     * Deletes one batch of expired key records and decisions ({@code idempotency_sweep}).
     *
     * @param connection a pooled connection
     * @param batch      rows per statement
     * @return key records deleted
     * @throws SQLException from the driver
     */
    static int sweep(Connection connection, int batch) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(SWEEP)) {
            statement.setInt(1, batch);
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? row.getInt(1) : 0;
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
}
