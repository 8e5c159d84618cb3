package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The cleanup phase: background workers stop, then resources (stores, clients) close, all bounded by one deadline,
 * {@code shutdown.cleanup-timeout}, created when the phase begins.
 *
 * <p>Workers stop first because they use the resources. Resources close in parallel, each on its own platform thread:
 * a close that hangs is abandoned at the deadline and named in the log instead of holding up the summary, the
 * metrics linger and the exit. Platform rather than virtual threads, because a close that blocks while pinning a
 * carrier thread would starve the health listener's virtual threads on a small machine.
 */
final class Cleanup {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private Cleanup() {
    }

    /**
     * Runs the cleanup.
     *
     * @param workers   background workers, stopped first
     * @param resources resources with their names, closed after the workers
     * @param timeout   {@code shutdown.cleanup-timeout}
     * @return names of the workers and resources that had not finished at the deadline (empty when all did)
     * @throws InterruptedException when the sequence thread is interrupted
     */
    static List<String> run(List<PeriodicWorker> workers, List<Map.Entry<String, AutoCloseable>> resources,
                            Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        LOGGER.log(Level.INFO, "Shutdown phase cleanup: stopping {0,number,#} workers, closing {1,number,#} resources, "
                               + "cleanup timeout {2,number,#} ms", workers.size(), resources.size(),
                   timeout.toMillis());
        List<String> unfinished = new ArrayList<>();
        workers.forEach(PeriodicWorker::requestStop);
        for (PeriodicWorker worker : workers) {
            if (!worker.awaitStop(deadline)) {
                unfinished.add(worker.name());
            }
        }
        List<Thread> closing = new ArrayList<>();
        for (Map.Entry<String, AutoCloseable> resource : resources) {
            closing.add(Thread.ofPlatform().name(resource.getKey()).daemon(true)
                                .start(() -> closeQuietly(resource.getKey(), resource.getValue())));
        }
        for (Thread thread : closing) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                thread.join(Duration.ofNanos(left));
            }
            if (thread.isAlive()) {
                unfinished.add(thread.getName());
            }
        }
        if (!unfinished.isEmpty()) {
            LOGGER.log(Level.WARNING, "Cleanup timeout of {0,number,#} ms reached; abandoned: {1}", timeout.toMillis(),
                       String.join(", ", unfinished));
        }
        return unfinished;
    }

    /**
     * Closes a resource on the calling thread; a failure is logged, never thrown.
     *
     * @param name     name for the log
     * @param resource the resource
     */
    static void closeQuietly(String name, AutoCloseable resource) {
        try {
            resource.close();
        } catch (Exception e) {
            LOGGER.log(Level.WARNING, "Closing " + name + " failed", e);
        }
    }
}
