package com.example.payments.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a top-level test class that leaves a fixture running ({@link Leftovers}) and stops the fixture, so the next
 * class starts on a clean machine whatever the order the classes run in; fails it too when a service's background
 * worker ({@code PeriodicWorker}: sweeper, expiry, reconciler) still runs 5 s after the class (it would use closed
 * resources and export spans into the next class's service, the tracer being process-wide). Registered for every test class through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} with extension auto-detection on
 * ({@code junit-platform.properties}).
 */
public final class LeftoversExtension implements BeforeAllCallback, AfterAllCallback {

    private static final String WORKER_CLASS = "com.example.payments.lifecycle.PeriodicWorker";
    private static final Duration WORKER_GRACE = Duration.ofSeconds(5);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LeftoversExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        if (topLevel(context)) {
            context.getStore(NAMESPACE).put("mark", Leftovers.mark());
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (!topLevel(context)) {
            return;
        }
        Long mark = context.getStore(NAMESPACE).get("mark", Long.class);
        List<String> left = new ArrayList<>(Leftovers.closeSince(mark == null ? 0 : mark));
        left.addAll(runningWorkers());
        if (!left.isEmpty()) {
            throw new AssertionError(context.getRequiredTestClass().getSimpleName()
                                     + " left running (now stopped): " + String.join("; ", left));
        }
    }

    private static List<String> runningWorkers() {
        long deadline = System.nanoTime() + WORKER_GRACE.toNanos();
        List<String> running;
        do {
            running = Thread.getAllStackTraces().entrySet().stream()
                    .filter(e -> e.getKey().isAlive() && Arrays.stream(e.getValue()).anyMatch(
                            f -> f.getClassName().equals(WORKER_CLASS) && f.getMethodName().equals("loop")))
                    .map(e -> "background worker thread " + e.getKey().getName())
                    .toList();
            if (running.isEmpty()) {
                return running;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return running;
            }
        } while (System.nanoTime() - deadline < 0);
        return running;
    }

    private static boolean topLevel(ExtensionContext context) {
        return context.getRequiredTestClass().getEnclosingClass() == null;
    }
}
