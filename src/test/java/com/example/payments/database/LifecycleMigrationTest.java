package com.example.payments.database;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import com.example.payments.testing.PostgresServer;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The lifecycle migration on a database holding authorizations written before it: nothing captured, an expiry of
 * {@code created_at + authorization.validity}, and those already past it {@code EXPIRED} (no acquirer call).
 */
class LifecycleMigrationTest {

    @Test
    void authorizationsWrittenBeforeTheLifecycleGetTheirExpiryAndThoseAlreadyPastItExpire() throws Exception {
        PostgresServer.assumeInstalled();
        try (PostgresServer server = PostgresServer.start()) {
            Flyway.configure().dataSource(server.url(), PostgresServer.USER, null)
                    .locations("classpath:db/migration").target("1").load().migrate();
            try (Connection connection = DriverManager.getConnection(server.url(), PostgresServer.USER, null);
                 Statement statement = connection.createStatement()) {
                statement.execute("INSERT INTO authorizations VALUES "
                        + "('00000000-0000-8000-8000-000000000001', 'att_1', 'm_123', NULL, 1299, 'EUR', 'visa', "
                        + "'1111', 'APPROVED', NULL, now() - interval '1 hour'), "
                        + "('00000000-0000-8000-8000-000000000002', 'att_2', 'm_123', NULL, 1299, 'EUR', 'visa', "
                        + "'1111', 'APPROVED', NULL, now() - interval '3 days'), "
                        + "('00000000-0000-8000-8000-000000000003', 'att_3', 'm_123', NULL, 1299, 'EUR', 'visa', "
                        + "'0002', 'DECLINED', 'card_declined', now() - interval '3 days')");
                DatabaseSettings settings = new DatabaseSettings(server.url(), Optional.of(PostgresServer.USER),
                        Optional.empty(), 2, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                        Optional.empty());
                try (Migrations migrations = Migrations.create(settings, Duration.ofDays(2))) {
                    assertThat(migrations.migrate().isEmpty(), is(true));
                }
                try (ResultSet rows = statement.executeQuery("SELECT attempt_id, state, captured_amount, "
                        + "expires_at = created_at + interval '2 days' FROM authorizations ORDER BY attempt_id")) {
                    String[] states = {"APPROVED", "EXPIRED", "DECLINED"};
                    for (String state : states) {
                        rows.next();
                        assertThat(rows.getString(1), rows.getString(2), is(state));
                        assertThat(rows.getLong(3), is(0L));
                        assertThat(rows.getBoolean(4), is(true));
                    }
                }
            }
        }
    }
}
