package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;

import com.example.payments.testing.PostgresServer;
import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;

/**
 * Fault path 1, the lease lapses and nobody else claims: the process (or its Redis) is frozen longer than the lease
 * while the issuer call runs. Before the recorded decision existed, the client got its 201 but the decision was not
 * stored, and the same request again was authorized a second time with a new id. Now the lapsed owner records its
 * decision and completes the key nobody took (or the next claim recovers the decision), and every retry replays it.
 */
class LeaseLapseIT {

    private static final Duration PAUSE = Duration.ofSeconds(4);

    @Test
    void aServiceFrozenLongerThanItsLeaseDuringTheIssuerCallAuthorizesOnce() throws Exception {
        Timeline timeline = Timeline.create("fault-1-lease-lapses-service-frozen");
        try (ServiceProcess service = ServiceProcess.start(FaultConfigs.inMemory())) {
            service.awaitReady(Duration.ofSeconds(20));
            OneKeyClient client = new OneKeyClient(timeline);
            var original = client.sendAsync(service, "original");
            OneKeyClient.awaitClaims(service, 1);
            service.signal("STOP");
            timeline.add("test", "kill -STOP the service for " + PAUSE.toMillis() + " ms (lease 2 s)");
            Thread.sleep(PAUSE);
            service.signal("CONT");
            timeline.add("test", "kill -CONT");
            original.join();
            client.retryUntilCreated(List.of(service));
            client.send(service, "again");
            timeline.write(service.output());

            client.assertOneAuthorization(List.of(service));
            // At most: waking from the pause, the call's timeout may fire before its decision is read; that decision
            // is kept for the retry (counted outcome unknown), which never asks the issuer again.
            assertThat("the authorizer decided at most once", OneKeyClient.decided(List.of(service)),
                       lessThanOrEqualTo(1.0));
            assertThat("one decision recorded", OneKeyClient.recorded(List.of(service)), is(1.0));
            assertThat("one authorization at the issuer", OneKeyClient.issuerAuthorizations(List.of(service)),
                       is(1.0));
        }
    }

    @Test
    void aRedisFrozenLongerThanTheLeaseDuringTheIssuerCallAuthorizesOnce() throws Exception {
        Timeline timeline = Timeline.create("fault-1-lease-lapses-redis-frozen");
        try (RedisServer redis = RedisServer.start(); PostgresServer postgres = PostgresServer.start();
                ServiceProcess service = ServiceProcess.start(FaultConfigs.redis(redis, postgres))) {
            service.awaitReady(Duration.ofSeconds(20));
            OneKeyClient client = new OneKeyClient(timeline);
            var original = client.sendAsync(service, "original");
            OneKeyClient.awaitClaims(service, 1);
            redis.pause();
            timeline.add("test", "kill -STOP redis-server for " + PAUSE.toMillis() + " ms (lease 3 s)");
            try {
                Thread.sleep(PAUSE);
            } finally {
                redis.resume();
                timeline.add("test", "kill -CONT redis-server");
            }
            original.join();
            client.retryUntilCreated(List.of(service));
            client.send(service, "again");
            timeline.write(service.output());

            client.assertOneAuthorization(List.of(service));
            client.assertOneRecordIn(redis);
            // At most: waking from the pause, the call's timeout may fire before its decision is read; that decision
            // is kept for the retry (counted outcome unknown), which never asks the issuer again.
            assertThat("the authorizer decided at most once", OneKeyClient.decided(List.of(service)),
                       lessThanOrEqualTo(1.0));
            assertThat("one authorization at the issuer", OneKeyClient.issuerAuthorizations(List.of(service)),
                       is(1.0));
        }
    }
}
