package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;

import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Fault path 2, the lease is lost and somebody else claims: Redis restarts without persistence while replica A calls
 * the issuer, and the client's retry on replica B claims the key anew. Before, both answered 201 with different ids
 * and GET found both. Now both executions carry the same attempt id (the issuer deduplicates on it), derive the same
 * authorization id from it, and converge on the decision recorded first: one authorization, however many 201s.
 */
class LeaseLostIT {

    @Test
    void aClaimLostWithARedisRestartAndTakenOverByAnotherReplicaAuthorizesOnce() throws Exception {
        Timeline timeline = Timeline.create("fault-2-lease-lost-redis-restart");
        try (RedisServer redis = RedisServer.start()) {
            // The call takes 1.8 s, long enough for the restart and B's reconnection to fall inside it.
            var config = FaultConfigs.redis(redis, "authorizer.timeout", "PT2S", "authorizer.simulated-latency",
                                            "PT1.8S", "idempotency.in-flight-lease", "PT4S");
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
            }
        }
    }
}
