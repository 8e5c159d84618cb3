package com.example.payments.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A record of what a shutdown test saw, in milliseconds since the signal (negative before it): signal, phase
 * boundaries from the service log, every request's send / first byte / close / status, every probe poll. Written to
 * {@code target/timelines/<name>.txt} so a failing run can be read afterwards; tests assert on the order of events,
 * with generous bounds, never on exact milliseconds.
 */
public final class Timeline {

    /**
     * One event.
     *
     * @param nanos  {@link System#nanoTime()} when it happened
     * @param source who saw it, e.g. {@code post-3}, {@code ready}, {@code live}, {@code service}
     * @param what   what happened, e.g. {@code send}, {@code first-byte}, {@code status 201}, {@code refused}
     */
    public record Event(long nanos, String source, String what) {
    }

    private final String name;
    private final long startNanos = System.nanoTime();
    private final long startEpochMillis = System.currentTimeMillis();
    private volatile long signalNanos = Long.MIN_VALUE;
    private final List<Event> events = new CopyOnWriteArrayList<>();

    private Timeline(String name) {
        this.name = name;
    }

    /**
     * Creates an empty timeline.
     *
     * @param name file name under {@code target/timelines/}
     * @return timeline
     */
    public static Timeline create(String name) {
        return new Timeline(name);
    }

    /**
     * Marks the moment the signal is sent; all times are relative to it.
     *
     * @param signal e.g. {@code TERM}
     */
    public void signalSent(String signal) {
        signalNanos = System.nanoTime();
        add("test", "kill -" + signal);
    }

    /**
     * Adds an event at the current time.
     *
     * @param source who saw it
     * @param what   what happened
     * @return the event
     */
    public Event add(String source, String what) {
        Event event = new Event(System.nanoTime(), source, what);
        events.add(event);
        return event;
    }

    /**
     * Adds an event that happened at a known time.
     *
     * @param nanos  {@link System#nanoTime()} when it happened
     * @param source who saw it
     * @param what   what happened
     * @return the event
     */
    public Event addAt(long nanos, String source, String what) {
        Event event = new Event(nanos, source, what);
        events.add(event);
        return event;
    }

    /**
     * Adds the service's log lines that match, as {@code service} events at the time each line arrived (a few ms
     * after it was written): the phase boundaries of the shutdown come from here.
     *
     * @param lines the child's output
     * @param match which lines to add, e.g. those of the shutdown sequence
     */
    public void addServiceLines(List<ServiceProcess.Line> lines, Predicate<String> match) {
        lines.stream().filter(line -> match.test(line.text()))
                .forEach(line -> addAt(line.nanos(), "service", line.text()));
    }

    /**
     * Milliseconds from the signal to a {@link System#nanoTime()} value (negative before it).
     *
     * @param nanos the time
     * @return ms
     */
    public long millis(long nanos) {
        return millis(new Event(nanos, "", ""));
    }

    /**
     * Milliseconds from the signal to a wall-clock time, e.g. the timestamp the service wrote in a log line (the
     * service runs on the same machine, so the same clock): more precise than when the line arrived here.
     *
     * @param epochMillis milliseconds since the epoch
     * @return ms since the signal (negative before it)
     */
    public long millisAtEpoch(long epochMillis) {
        return millis(startNanos + (epochMillis - startEpochMillis) * 1_000_000L);
    }

    /**
     * Milliseconds from the signal to an event (negative before it; from the timeline's creation if no signal yet).
     *
     * @param event the event
     * @return ms
     */
    public long millis(Event event) {
        long origin = signalNanos == Long.MIN_VALUE ? startNanos : signalNanos;
        return Math.floorDiv(event.nanos() - origin, 1_000_000L);
    }

    /**
     * Milliseconds from the signal to now.
     *
     * @return ms
     */
    public long now() {
        return millis(new Event(System.nanoTime(), "", ""));
    }

    private String format(Event e) {
        return String.format("%7d ms  %-16s %s", millis(e), e.source(), e.what());
    }

    /**
     * Events so far, in the order they were added.
     *
     * @return snapshot
     */
    public List<Event> events() {
        return List.copyOf(events);
    }

    /**
     * Events of one source.
     *
     * @param source source name
     * @return matching events in order
     */
    public List<Event> of(String source) {
        return events.stream().filter(e -> e.source().equals(source)).toList();
    }

    /**
     * First event matching a condition.
     *
     * @param match condition
     * @return the event
     */
    public Optional<Event> first(Predicate<Event> match) {
        return events.stream().filter(match).findFirst();
    }

    /**
     * Last event matching a condition.
     *
     * @param match condition
     * @return the event
     */
    public Optional<Event> last(Predicate<Event> match) {
        List<Event> matching = events.stream().filter(match).toList();
        return matching.isEmpty() ? Optional.empty() : Optional.of(matching.getLast());
    }

    /**
     * Writes the timeline, sorted by time, with the service output appended.
     *
     * @param serviceOutput the child's log lines
     * @return the file written
     * @throws IOException when the file cannot be written
     */
    public Path write(List<String> serviceOutput) throws IOException {
        Path dir = Path.of("target", "timelines");
        Files.createDirectories(dir);
        Path file = dir.resolve(name + ".txt");
        StringBuilder text = new StringBuilder("# ms since the signal; negative = before it\n");
        events.stream().sorted(java.util.Comparator.comparingLong(Event::nanos))
                .forEach(e -> text.append(format(e)).append('\n'));
        text.append("\n# service output\n");
        serviceOutput.forEach(line -> text.append(line).append('\n'));
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    @Override
    public String toString() {
        return name + ":\n" + String.join("\n", events.stream()
                .sorted(java.util.Comparator.comparingLong(Event::nanos)).map(this::format).toList());
    }
}
