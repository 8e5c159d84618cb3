package com.example.payments.database;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;

import com.example.payments.idempotency.Identity;
import com.example.payments.idempotency.KeyBindings;

/**
 * {@link KeyBindings} in PostgreSQL: the {@code idempotency_bindings} table (migration {@code V2}), one row per
 * lookup key ever used, never deleted by the service. One statement per bind: an insert whose conflict returns the
 * row already there (locked, so two first uses of a key agree on one fingerprint; {@code xmax = 0} tells a row this
 * statement inserted).
 */
public final class PostgresKeyBindings implements KeyBindings {

    private static final String BIND = "INSERT INTO idempotency_bindings AS b (lookup_key, merchant, operation, "
                                       + "idempotency_key, fingerprint, created_at) VALUES (?, ?, ?, ?, ?, "
                                       + "clock_timestamp()) ON CONFLICT (lookup_key) DO UPDATE SET lookup_key = "
                                       + "b.lookup_key RETURNING b.fingerprint, (b.xmax = 0) AS created";
    private static final String UNBIND = "DELETE FROM idempotency_bindings WHERE lookup_key = ? AND fingerprint = ?";

    private final Database database;

    private PostgresKeyBindings(Database database) {
        this.database = database;
    }

    /**
     * Creates the table's client.
     *
     * @param database the pool (closed by its owner)
     * @return the bindings
     */
    public static PostgresKeyBindings create(Database database) {
        return new PostgresKeyBindings(database);
    }

    @Override
    public Bound bind(String lookupKey, List<Identity> identities, int preferred) {
        LookupKey parts = LookupKey.parse(lookupKey);
        return database.call("bind-key", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(BIND)) {
                statement.setString(1, lookupKey);
                statement.setString(2, parts.merchant());
                statement.setString(3, parts.operation());
                statement.setString(4, parts.key());
                statement.setString(5, identities.get(preferred).fingerprint());
                try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    return new Bound(KeyBindings.indexOf(identities, row.getString(1)), row.getBoolean(2));
                }
            }
        });
    }

    @Override
    public void unbind(String lookupKey, String fingerprint) {
        database.call("unbind-key", connection -> {
            try (PreparedStatement statement = connection.prepareStatement(UNBIND)) {
                statement.setString(1, lookupKey);
                statement.setString(2, fingerprint);
                return statement.executeUpdate();
            }
        });
    }
}
