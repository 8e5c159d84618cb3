package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.protocol.CommandType;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * Fault path 3, the completion fails after the decision: while the authorizer runs, Redis is made to refuse every
 * script ({@code ACL SETUSER default -evalsha}), then allowed again once the lease has run out. Before, the
 * authorization record existed, the key stayed in flight, and after the lease the retry authorized again with a new id.
 * Now the decision is written on its own when the script is refused, and the retry's claim recovers it.
 */
class CompletionRefusedIT {

    @Test
    void aCompletionRedisRefusesAfterTheDecisionIsRecoveredByTheRetry() throws Exception {
        Timeline timeline = Timeline.create("fault-3-completion-refused");
        RedisServer.assumeInstalled();
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess service = ServiceProcess.start(FaultConfigs.redis(redis, postgres))) {
            service.awaitReady(Duration.ofSeconds(20));
            OneKeyClient client = new OneKeyClient(timeline);
            RedisClient admin = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> acl = admin.connect()) {
                var original = client.sendAsync(service, "original");
                OneKeyClient.awaitClaims(service, 1);
                acl.sync().aclSetuser("default", AclSetuserArgs.Builder.on().removeCommand(CommandType.EVALSHA));
                timeline.add("test", "ACL SETUSER default -evalsha");
                original.join();
                client.send(service, "while-refused");
                // Past the lease (3 s) of the key that was never completed.
                Thread.sleep(3500);
                acl.sync().aclSetuser("default", AclSetuserArgs.Builder.on().addCommand(CommandType.EVALSHA));
                timeline.add("test", "ACL SETUSER default +evalsha");
                client.retryUntilCreated(List.of(service));
                client.send(service, "again");
            } finally {
                admin.shutdown();
            }
            timeline.write(service.output());

            client.assertOneAuthorization(List.of(service));
            client.assertOneRecordIn(redis);
            assertThat("the authorizer decided once", OneKeyClient.decided(List.of(service)), is(1.0));
            assertThat("one authorization at the issuer", OneKeyClient.issuerAuthorizations(List.of(service)),
                       is(1.0));
            assertThat("the retry recovered the recorded decision", MetricsScrape.of(service.healthPort())
                    .sum("idempotency_requests_total", Map.of("outcome", "recovered")), is(1.0));
        }
    }
}
