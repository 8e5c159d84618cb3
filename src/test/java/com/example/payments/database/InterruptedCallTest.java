package com.example.payments.database;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.example.payments.testing.PostgresDatabase;
import com.example.payments.testing.PostgresServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The end of the drain interrupts the requests still running. A request interrupted in the middle of a database write
 * (found in a CI run of {@code DrainCutOffIT}: the issuer decided as the process woke past its drain deadline, the
 * interrupt closed the JDBC socket while the authorization was being written, the decision went unrecorded and the
 * retry on another replica asked the issuer again) still completes its write: the statement is not cut, and the
 * thread learns of the interrupt once it ended.
 */
class InterruptedCallTest {

    @RegisterExtension
    static final PostgresDatabase POSTGRES = PostgresDatabase.withPool(2, Duration.ofSeconds(5), Duration.ofSeconds(1),
                                                                       Duration.ofSeconds(2));

    @Test
    void aWriteWhoseThreadIsInterruptedMidStatementIsCommittedAndTheInterruptKept() throws Exception {
        PostgresServer.assumeInstalled();
        POSTGRES.execute("CREATE TABLE IF NOT EXISTS interrupted_writes (id int PRIMARY KEY)");
        Database database = POSTGRES.database();
        CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
        CompletableFuture<Integer> written = new CompletableFuture<>();
        Thread request = Thread.ofVirtual().start(() -> {
            try {
                written.complete(database.call("slow-insert", connection -> {
                    try (var statement = connection.createStatement()) {
                        statement.execute("SELECT pg_sleep(0.5)");
                        return statement.executeUpdate("INSERT INTO interrupted_writes VALUES (1)");
                    }
                }));
            } catch (RuntimeException e) {
                written.completeExceptionally(e);
            } finally {
                interruptKept.complete(Thread.currentThread().isInterrupted());
            }
        });
        // The interrupt lands while the statement runs (pg_sleep holds it for 500 ms).
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!"1".equals(POSTGRES.query("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(0.5)' "
                                          + "AND state = 'active'"))) {
            assertThat("the statement started", System.nanoTime() < deadline, is(true));
            Thread.sleep(10);
        }
        request.interrupt();
        assertThat("the write completed", written.get(10, TimeUnit.SECONDS), is(1));
        assertThat("the thread still sees the interrupt", interruptKept.get(10, TimeUnit.SECONDS), is(true));
        assertThat(POSTGRES.query("SELECT count(*) FROM interrupted_writes WHERE id = 1"), is("1"));
    }

    /** The same when the interrupt came before the call: a cut-off request that goes on to record its decision. */
    @Test
    void aWriteCalledWithTheInterruptAlreadySetIsCommittedAndTheInterruptKept() throws Exception {
        PostgresServer.assumeInstalled();
        POSTGRES.execute("CREATE TABLE IF NOT EXISTS interrupted_writes (id int PRIMARY KEY)");
        Database database = POSTGRES.database();
        CompletableFuture<Integer> written = new CompletableFuture<>();
        CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            Thread.currentThread().interrupt();
            try {
                written.complete(database.call("insert", connection -> {
                    try (var statement = connection.createStatement()) {
                        return statement.executeUpdate("INSERT INTO interrupted_writes VALUES (2)");
                    }
                }));
            } catch (RuntimeException e) {
                written.completeExceptionally(e);
            } finally {
                interruptKept.complete(Thread.currentThread().isInterrupted());
            }
        });
        assertThat("the write completed", written.get(10, TimeUnit.SECONDS), is(1));
        assertThat("the thread still sees the interrupt", interruptKept.get(10, TimeUnit.SECONDS), is(true));
        assertThat(POSTGRES.query("SELECT count(*) FROM interrupted_writes WHERE id = 2"), is("1"));
    }
}
