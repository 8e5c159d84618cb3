package com.example.payments.database;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs a call of the warm-up's view of the database ({@link Database#rolledBackView}) in one transaction that is
 * always rolled back: the statements run for real (the pool's connections, the driver's prepared statements, the
 * schema's functions and their locks, all transaction-scoped), and nothing they write stays. The call sees a
 * connection that refuses {@code commit()} and {@code setAutoCommit(true)} ({@link SQLException}), so a store that
 * commits on its own one day fails its warm-up instead of writing.
 */
final class RolledBackConnection {

    private RolledBackConnection() {
    }

    /**
     * Runs the call in a transaction, then rolls it back, whatever happened.
     *
     * @param connection a pooled connection in auto-commit mode, returned in that mode
     * @param call       the store's JDBC work
     * @param <T>        result type
     * @return the call's result
     * @throws SQLException from the driver, or when the call tried to commit
     */
    static <T> T run(Connection connection, Database.SqlCall<T> call) throws SQLException {
        connection.setAutoCommit(false);
        try {
            return call.run(guarded(connection));
        } finally {
            try {
                connection.rollback();
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }

    private static Connection guarded(Connection connection) {
        return (Connection) Proxy.newProxyInstance(RolledBackConnection.class.getClassLoader(),
                                                   new Class<?>[] {Connection.class}, (proxy, method, args) -> {
            switch (method.getName()) {
            case "commit" -> throw new SQLException("warm-up: commit refused, the transaction is rolled back");
            case "setAutoCommit" -> {
                if ((Boolean) args[0]) {
                    throw new SQLException("warm-up: auto-commit refused, the transaction is rolled back");
                }
                return null;
            }
            case "close" -> {
                return null;
            }
            default -> {
                try {
                    return method.invoke(connection, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }
            }
        });
    }
}
