package com.example.payments;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ThreadFactory;

import io.helidon.webserver.WebServer;

/**
 * Runs a Helidon 4.5 server's connections on platform threads of their own instead of virtual threads: used for the
 * health listener, so that the kubelet's probes are answered while the business listener saturates the CPU.
 *
 * <p>Why: Helidon 4.5 starts every accepted connection of every listener on a new virtual thread, and all virtual
 * threads share the JVM's one scheduler, whose carrier threads are as many as the CPUs the JVM sees: one in a pod
 * limited to one CPU. A virtual thread runs until it blocks; while 64 business clients keep the carrier busy, a new
 * health connection's thread waits its turn in the scheduler's queue (measured on one CPU: 6 of 8 one-second liveness
 * probes unanswered with no other load on the health listener; handing the connection to a platform thread once its
 * virtual thread had started still left 7 of 8 unanswered, the wait is for that start). A platform thread is
 * scheduled by the kernel, which shares the CPU between runnable threads: measured the same way, every probe answered
 * within 42 ms. Helidon has no setting for the threads of a listener, so this replaces the executor a listener hands
 * its connections to (a thread per connection, Helidon's own executor type) before the server starts. The health
 * listener holds at most {@code 4 x health-server.max-tcp-connections} connections, so at most that many such threads.
 *
 * <p>It reaches into Helidon's internals ({@code LoomServer.listeners}, {@code ServerListener.readerExecutor},
 * {@code ThreadPerTaskExecutor.create}), which an upgrade may change: then startup fails with this class's message and
 * {@code HealthFloodIT} fails the build, rather than the probes silently sharing the carrier again. Setting a final
 * field this way works on the class path up to JDK 25; JDK 26 (JEP 500) warns about it, and a later JDK may require
 * {@code --enable-final-field-mutation=ALL-UNNAMED}.
 */
final class PlatformThreadListener {

    private PlatformThreadListener() {
    }

    /**
     * Makes every listener of a built, not yet started server hand its connections to platform threads.
     *
     * @param server built by {@code WebServer.builder()...build()}, not started
     * @throws IllegalStateException when Helidon's internals are not as expected (another Helidon version)
     */
    static void onPlatformThreads(WebServer server) {
        try {
            Method create = Class.forName("io.helidon.webserver.ThreadPerTaskExecutor")
                    .getDeclaredMethod("create", ThreadFactory.class);
            create.setAccessible(true);
            Field listeners = server.getClass().getDeclaredField("listeners");
            listeners.setAccessible(true);
            for (Object listener : ((Map<?, ?>) listeners.get(server)).values()) {
                Field readers = listener.getClass().getDeclaredField("readerExecutor");
                readers.setAccessible(true);
                ThreadFactory threads = Thread.ofPlatform().daemon(true).name("health-connection-", 0).factory();
                readers.set(listener, create.invoke(null, threads));
            }
        } catch (ReflectiveOperationException | ClassCastException | SecurityException e) {
            throw new IllegalStateException("Cannot put the health listener's connections on platform threads: this "
                                            + "Helidon's WebServer internals are not those of Helidon 4.5 ("
                                            + e + ")", e);
        }
    }
}
