package com.example.payments.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import com.example.payments.health.ReadinessDependency;
import com.example.payments.redis.RedisConnection;
import com.example.payments.redis.RedisIdempotencyStore;
import com.example.payments.testing.RedisServer;

import io.helidon.health.HealthCheck;
import io.helidon.health.HealthCheckResponse;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.protocol.CommandType;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.MetricsConfig;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What only the Redis backend does: reload scripts, fail fast and closed when Redis is gone or hung, recover by itself,
 * report readiness, and let the registry renew and release keys held in Redis.
 */
class RedisBackendTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final String key = RequestIdentities.lookupKey("authorize", "m_123",
                                                           new IdempotencyKey(UUID.randomUUID().toString()));
    private final List<Identity> request = List.of(IdempotencyStoreContract.identity("f"));

    @Test
    void scriptsAreLoadedAgainAfterRedisForgetsThem() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            Claim.Acquired claim = (Claim.Acquired) store.claim(key, request, LONG, Quota.UNLIMITED);
            redis.call("flush scripts", commands -> commands.scriptFlush());
            assertThat(store.release(key, claim.token()), is(true));
        }
    }

    @Test
    void aStoppedRedisIsRefusedAtOnceAndTheConnectionRecoversByItself() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            HealthCheck check = ReadinessDependency.of("idempotency-store", Duration.ofSeconds(1), redis.commandTimeout(),
                                                        redis::check);
            server.stop();

            long start = System.nanoTime();
            assertThrows(IdempotencyStore.UnavailableException.class,
                         () -> store.claim(key, request, LONG, Quota.UNLIMITED));
            assertThat(Duration.ofNanos(System.nanoTime() - start), lessThan(Duration.ofMillis(600)));
            HealthCheckResponse down = check.call();
            assertThat(down.status(), is(HealthCheckResponse.Status.DOWN));
            assertThat(String.valueOf(down.details().get("error")), containsString("Redis"));

            server.restart();
            // The restarted Redis is empty: the scripts are gone too (NOSCRIPT, loaded again).
            assertThat(eventually(() -> store.claim(key, request, LONG, Quota.UNLIMITED)), instanceOf(Claim.Acquired.class));
            assertThat(check.call().status(), is(HealthCheckResponse.Status.UP));
        }
    }

    @Test
    void aRedisUnreachableAtStartupIsConnectedOnceItAnswers() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            server.stop();
            try (RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0))) {
                RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
                assertThrows(IdempotencyStore.UnavailableException.class, () -> store.claim(key, request, LONG, Quota.UNLIMITED));
                server.restart();
                assertThat(eventually(() -> store.claim(key, request, LONG, Quota.UNLIMITED)), instanceOf(Claim.Acquired.class));
            }
        }
    }

    @Test
    void aHungRedisIsRefusedWithinTheCommandTimeout() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0))) {
            RedisIdempotencyStore store = RedisIdempotencyStore.create(redis);
            HealthCheck check = ReadinessDependency.of("idempotency-store", Duration.ofMillis(300),
                                                        redis.commandTimeout(), redis::check);
            server.pause();
            try {
                long start = System.nanoTime();
                IdempotencyStore.UnavailableException e = assertThrows(IdempotencyStore.UnavailableException.class,
                        () -> store.claim(key, request, LONG, Quota.UNLIMITED));
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(e.getMessage(), containsString("no answer within the command timeout"));
                assertThat(took, lessThan(Duration.ofMillis(900)));

                start = System.nanoTime();
                assertThat(check.call().status(), is(HealthCheckResponse.Status.DOWN));
                assertThat(Duration.ofNanos(System.nanoTime() - start), lessThan(Duration.ofMillis(700)));
            } finally {
                server.resume();
            }
            assertThat(eventually(() -> store.claim(key, request, LONG, Quota.UNLIMITED)), instanceOf(Claim.class));
        }
    }

    @Test
    void theRegistryKeepsRenewingAKeyHeldInRedisAndReleasesItWhenTheRequestIsCutOff() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0));
                IdempotencyRegistry registry = IdempotencyRegistry.create(RedisIdempotencyStore.create(redis),
                        Duration.ofMillis(300), LONG, Duration.ZERO, Quota.UNLIMITED,
                        Metrics.createMeterRegistry(MetricsConfig.create()))) {
            RedisIdempotencyStore other = RedisIdempotencyStore.create(redis);
            Claim claim = registry.claim(key, request);
            assertThat(claim, instanceOf(Claim.Acquired.class));

            Thread.sleep(1000);
            assertThat(other.claim(key, request, LONG, Quota.UNLIMITED), is(new Claim.InFlight()));

            assertThat(registry.releaseAllHeld(IdempotencyRegistry.ReleaseReason.SHUTDOWN), is(1));
            assertThat(other.claim(key, request, LONG, Quota.UNLIMITED), instanceOf(Claim.Acquired.class));
        }
    }

    @Test
    void aKeyWhoseReleaseFailedStaysHeldAndTheKeyReleasePhaseReleasesItOnceRedisAnswers() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0));
                IdempotencyRegistry registry = IdempotencyRegistry.create(RedisIdempotencyStore.create(redis),
                        LONG, LONG, Duration.ZERO, Quota.UNLIMITED, Metrics.createMeterRegistry(MetricsConfig.create()))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            // Refused without running (a paused Redis would run the timed-out release once it resumes).
            redis.call("acl", c -> c.aclSetuser("default", AclSetuserArgs.Builder.removeCommand(CommandType.EVALSHA)));
            try {
                assertThat(registry.release(claim, IdempotencyRegistry.ReleaseReason.SHUTDOWN), is(false));
            } finally {
                redis.call("acl", c -> c.aclSetuser("default", AclSetuserArgs.Builder.addCommand(CommandType.EVALSHA)));
            }
            assertThat("still known after the failed release", registry.heldCount(), is(1));
            assertThat(registry.releaseAllHeld(IdempotencyRegistry.ReleaseReason.SHUTDOWN), is(1));
            assertThat(registry.heldCount(), is(0));
            assertThat(registry.releasedCount(), is(1L));
        }
    }

    @Test
    void anInterruptedRequestThreadStillReleasesItsKey() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisConnection redis = RedisConnection.create(RedisIdempotencyStoreTest.settings(server.uri(), 0));
                IdempotencyRegistry registry = IdempotencyRegistry.create(RedisIdempotencyStore.create(redis),
                        LONG, LONG, Duration.ZERO, Quota.UNLIMITED, Metrics.createMeterRegistry(MetricsConfig.create()))) {
            Claim.Acquired claim = (Claim.Acquired) registry.claim(key, request);
            java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicBoolean stillInterrupted = new java.util.concurrent.atomic.AtomicBoolean();
            Thread requestThread = Thread.ofVirtual().start(() -> {
                Thread.currentThread().interrupt();
                released.set(registry.release(claim, IdempotencyRegistry.ReleaseReason.SHUTDOWN));
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            });
            requestThread.join();
            assertThat(released.get(), is(true));
            assertThat("the interrupt is kept for the caller", stillInterrupted.get(), is(true));
            assertThat(RedisIdempotencyStore.create(redis).claim(key, request, LONG, Quota.UNLIMITED), instanceOf(Claim.Acquired.class));
        }
    }

    /** Retries for up to 5 s while Redis is unavailable (Lettuce reconnects at most a second apart). */
    static <T> T eventually(java.util.function.Supplier<T> action) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            try {
                return action.get();
            } catch (IdempotencyStore.UnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }
}
