package com.example.payments.lifecycle;

import java.util.concurrent.CountDownLatch;

/**
 * Test-only {@link ShutdownResource} that hangs the shutdown on purpose, found only by a child JVM launched with
 * {@code target/test-classes} on its class path ({@code ServiceProcess.startWithTestClasses}). It does nothing unless
 * the system property {@value #PROPERTY} asks for a hang, so that a stray discovery (in-JVM tests, any other child)
 * changes nothing:
 * <ul>
 *     <li>{@code close}: {@link #close()} never returns, even when interrupted, like a client stuck on a dead peer;</li>
 *     <li>{@code exit-hook}: {@link #close()} returns at once but registers a JVM shutdown hook that never returns,
 *     like a library's hook stuck on the same dead peer;</li>
 *     <li>{@code fail}: {@link #close()} throws at once, an exception whose message and cause quote a card number
 *     (the cleanup logs it with its stack trace: {@code EcsLogLinesIT} checks the line's {@code error.*} fields).</li>
 * </ul>
 */
public final class HangingShutdownResource implements ShutdownResource {

    /** System property selecting the hang. */
    public static final String PROPERTY = "payments.test.hang";

    @Override
    public String name() {
        return "test-hanging-resource";
    }

    @Override
    public void close() {
        switch (System.getProperty(PROPERTY, "")) {
        case "close" -> hangForever();
        case "exit-hook" -> Runtime.getRuntime().addShutdownHook(new Thread(HangingShutdownResource::hangForever,
                                                                            "test-hanging-exit-hook"));
        case "fail" -> throw new IllegalStateException("close failed for card 4111 1111 1111 1111",
                                                       new IllegalArgumentException("bad card 5555555555554444"));
        default -> { }
        }
    }

    // Deaf to interrupts as well: the sequence must not depend on a hung client cooperating.
    private static void hangForever() {
        CountDownLatch never = new CountDownLatch(1);
        while (true) {
            try {
                never.await();
            } catch (InterruptedException ignored) {
                // keep hanging
            }
        }
    }
}
