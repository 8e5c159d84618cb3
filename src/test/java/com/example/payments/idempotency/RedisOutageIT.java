package com.example.payments.idempotency;

import java.time.Duration;

import com.example.payments.testing.RedisServer;
import com.example.payments.testing.ServiceProcess;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.lessThan;

/**
 * {@link StoreOutageContract} on the Redis registry in front of PostgreSQL: Redis stopped for 10 s under light load.
 * Readiness says so at once; GET still answers (it reads the authorizations in PostgreSQL, which the outage does not
 * touch); a POST is answered 201 again within 5 s of Redis returning.
 */
class RedisOutageIT extends StoreOutageContract {

    private RedisServer redis;

    @Override
    Expectations expectations() {
        return new Expectations("idempotency-store", Duration.ofSeconds(20),
                                Duration.ZERO,            // readiness: the PING fails at once
                                Duration.ofSeconds(10),   // Redis down for 10 s
                                200,                      // GET reads PostgreSQL
                                Duration.ofSeconds(5),    // Lettuce reconnects at most 1 s apart
                                10);
    }

    @Override
    StoreBackend startBackend() throws Exception {
        return StoreBackend.onRedis(server -> redis = server);
    }

    @Override
    void takeDown(ServiceProcess service) {
        redis.stop();
    }

    @Override
    void bringBack() throws Exception {
        redis.restart();
    }

    @Override
    void afterRecovery(ServiceProcess service, long outage, long back, Sample recovered) {
        assertThat("recovered " + recovered.atMillis() + " ms after the outage began", recovered.atMillis(),
                   lessThan(15_000L));
    }
}
