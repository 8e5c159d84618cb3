package com.example.payments.lifecycle;

import java.util.List;
import java.util.ServiceLoader;

/**
 * A client or resource that the shutdown sequence closes in its cleanup phase, after the drain, next to the ones
 * {@code Main} registers itself: a forker's database pool, a message producer, an HTTP client to a partner.
 *
 * <p>Implementations are discovered with {@link ServiceLoader}: list the class in
 * {@code META-INF/services/com.example.payments.lifecycle.ShutdownResource} and give it a public no-argument
 * constructor. Each {@link #close()} runs on its own thread, in parallel with the others; the sequence waits for it
 * at most until the cleanup timeout ({@code shutdown.cleanup-timeout}, default 3 s) and then moves on, naming it in
 * the log, so one hung client costs the cleanup timeout and never the rest of the shutdown.
 */
public interface ShutdownResource extends AutoCloseable {

    /**
     * Name for the shutdown log, e.g. {@code "ledger-db-pool"}.
     *
     * @return a short name
     */
    String name();

    /**
     * Releases the resource. Called once, in the cleanup phase, when no request is in flight any more.
     *
     * @throws Exception when closing fails; logged, the sequence continues
     */
    @Override
    void close() throws Exception;

    /**
     * Every implementation on the class path.
     *
     * @return discovered resources, in class-path order
     */
    static List<ShutdownResource> discover() {
        return ServiceLoader.load(ShutdownResource.class).stream().map(ServiceLoader.Provider::get).toList();
    }
}
