package com.example.payments.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything a test starts that outlives a method call (child JVMs, Redis and PostgreSQL servers, in-process
 * listeners, contract registrations), tracked from its start to its close, so nothing a test started can outlive
 * the test class that started it.
 *
 * <p>Each fixture calls {@link #track} when it starts and closes the returned handle on every stop path.
 * {@link LeftoversExtension} (registered for every test class) closes whatever a top-level test class left open and
 * fails that class, naming each leftover; a JVM shutdown hook closes what is still open when the test JVM exits
 * (a crashed class). A port, a process or a temp directory can therefore never be mistaken for a later test's.
 */
public final class Leftovers {

    private static final Map<Long, Tracked> OPEN = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();

    static {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> closeSince(0)));
    }

    private Leftovers() {
    }

    /**
     * Whether a process still runs: alive and not a zombie. A process killed after its parent died is reparented to
     * PID 1 and stays a zombie until PID 1 reaps it, which some container inits do only now and then; it runs
     * nothing, but {@link ProcessHandle#isAlive()} still says {@code true} (and its command line reads empty).
     *
     * @param process the process
     * @return {@code true} while it runs, sleeps or is stopped; {@code false} once it exited, reaped or not
     */
    public static boolean running(ProcessHandle process) {
        if (!process.isAlive()) {
            return false;
        }
        Path proc = Path.of("/proc", Long.toString(process.pid()));
        try {
            // /proc/<pid>/stat: "pid (command) state ...", the command may hold spaces and parentheses
            String stat = Files.readString(proc.resolve("stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            if (state != 'Z' && state != 'X') {
                return true;
            }
            // A leader thread that exited shows Z too while the process's other threads still run.
            return Files.readAllLines(proc.resolve("status")).stream()
                    .anyMatch(line -> line.startsWith("Threads:") && !line.substring(8).trim().equals("1"));
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException | RuntimeException e) {
            return process.isAlive();
        }
    }

    /**
     * What a fixture gets back from {@link #track}: closing it marks the fixture stopped.
     */
    public interface Handle extends AutoCloseable {
        /** Marks the fixture stopped (idempotent). */
        @Override
        void close();
    }

    private record Tracked(long id, String what, Runnable cleanup) {
    }

    /**
     * Starts tracking a fixture.
     *
     * @param what    what it is, for the failure message (e.g. {@code "service process pid 1234"})
     * @param cleanup how to stop it when its test class forgot to (must not throw)
     * @return the handle the fixture closes when it stops
     */
    public static Handle track(String what, Runnable cleanup) {
        long id = IDS.incrementAndGet();
        OPEN.put(id, new Tracked(id, what, cleanup));
        return () -> OPEN.remove(id);
    }

    /**
     * A mark to compare with later: fixtures tracked after it have greater ids.
     *
     * @return the last id handed out
     */
    static long mark() {
        return IDS.get();
    }

    /**
     * Stops every fixture tracked after the mark and still open.
     *
     * @param mark from {@link #mark()}
     * @return what each stopped fixture was, oldest first; empty when none was left
     */
    static List<String> closeSince(long mark) {
        List<Tracked> left = new ArrayList<>(OPEN.values().stream().filter(tracked -> tracked.id() > mark).toList());
        left.sort((a, b) -> Long.compare(a.id(), b.id()));
        List<String> names = new ArrayList<>();
        for (Tracked tracked : left.reversed()) {
            if (OPEN.remove(tracked.id()) != null) {
                names.addFirst(tracked.what());
                try {
                    tracked.cleanup().run();
                } catch (RuntimeException e) {
                    names.set(0, tracked.what() + " (cleanup failed: " + e + ")");
                }
            }
        }
        return names;
    }
}
