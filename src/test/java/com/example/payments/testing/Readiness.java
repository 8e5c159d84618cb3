package com.example.payments.testing;

import java.io.IOException;
import java.time.Duration;

/**
 * Waits for a service to become ready, as Kubernetes does before it sends traffic.
 */
public final class Readiness {

    private Readiness() {
    }

    /**
     * Polls {@code /health/ready} until it answers 200.
     *
     * @param service the running service
     * @param timeout how long at most
     * @throws Exception when it is not ready in time (the message holds the last answer)
     */
    public static void await(ServiceProcess service, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                var response = Http.get("http://127.0.0.1:" + service.healthPort() + "/health/ready");
                if (response.statusCode() == 200) {
                    return;
                }
                last = response.statusCode() + " " + response.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("Not ready within " + timeout + ": " + last);
    }
}
