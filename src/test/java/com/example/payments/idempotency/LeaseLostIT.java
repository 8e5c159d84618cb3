package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.example.payments.issuer.IssuerStats;
import com.example.payments.testing.IssuerSimulatorProcess;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Fault path 2, the lease is lost and somebody else claims: Redis restarts without persistence while replica A calls
 * the issuer, and the client's retry on replica B claims the key anew and calls the issuer too. Before, both answered
 * 201 with different ids and GET found both. Now both executions carry the same attempt id, so the issuer (one
 * simulator shared by both replicas) decides once and answers the second call from its ledger; both derive the same
 * authorization id from it and converge on the decision recorded first: one authorization, however many 201s.
 */
class LeaseLostIT {

    @Test
    void aClaimLostWithARedisRestartAndTakenOverByAnotherReplicaAuthorizesOnce() throws Exception {
        Timeline timeline = Timeline.create("fault-2-lease-lost-redis-restart");
        // The issuer call takes 2.5 s, long enough for the restart and B's reconnection (up to a second) to fall
        // inside it. Lease 5 s > authorizer timeout 3 s + Redis 1.5 s.
        // The authorizations themselves live in PostgreSQL behind the Redis registry, as staging and prod run: a GET
        // on either replica finds the one that was made, whichever replica made it.
        PostgresServer.assumeInstalled();
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                IssuerSimulatorProcess issuer = IssuerSimulatorProcess.start(Map.of(
                        "issuer.simulated-latency", "PT2.5S"))) {
            var config = FaultConfigs.redis(redis, postgres, "authorizer.type", "http", "authorizer.http.uri",
                                            issuer.uri(), "authorizer.timeout", "PT3S",
                                            "idempotency.in-flight-lease", "PT5S");
            try (ServiceProcess a = ServiceProcess.start(config); ServiceProcess b = ServiceProcess.start(config)) {
                a.awaitReady(Duration.ofSeconds(20));
                b.awaitReady(Duration.ofSeconds(20));
                OneKeyClient client = new OneKeyClient(timeline);
                var original = client.sendAsync(a, "original-on-a");
                OneKeyClient.awaitClaims(a, 1);
                redis.restart();
                timeline.add("test", "redis-server restarted without persistence: the claim is gone");
                client.retryUntilCreated(List.of(b));
                original.join();
                client.retryUntilCreated(List.of(a, b));
                timeline.write(a.output());

                client.assertOneAuthorization(List.of(a, b));
                client.assertOneRecordIn(redis);
                assertThat("one decision recorded, whichever execution made it",
                           OneKeyClient.recorded(List.of(a, b)), is(1.0));
                IssuerStats stats = issuer.stats();
                assertThat("one authorization at the issuer: " + stats, stats.authorizations(), is(1L));
                assertThat(stats.attemptIdConflicts(), is(0L));
                assertThat(stats.paymentsApprovedMoreThanOnce(), is(0L));
            }
        }
    }
}
