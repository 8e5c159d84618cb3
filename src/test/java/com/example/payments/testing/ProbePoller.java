package com.example.payments.testing;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Polls one probe path the way the kubelet does (a fresh connection per poll, {@code Connection: close}) at a fixed
 * interval on its own thread, recording each poll in a {@link Timeline} and in {@link #polls()}.
 */
public final class ProbePoller implements AutoCloseable {

    /**
     * One poll.
     *
     * @param sentNanos     when it was sent
     * @param answeredNanos when its answer (or failure) came back
     * @param status        the status, or 0 when there was no response
     * @param body          the body, or the error
     */
    public record Poll(long sentNanos, long answeredNanos, int status, String body) {
        /**
         * Whether the poll got no answer (connection refused or reset).
         *
         * @return {@code true} without a response
         */
        public boolean failed() {
            return status == 0;
        }
    }

    private final int port;
    private final String path;
    private final String source;
    private final Timeline timeline;
    private final Duration interval;
    private final List<Poll> polls = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    private ProbePoller(int port, String path, String source, Duration interval, Timeline timeline) {
        this.port = port;
        this.path = path;
        this.source = source;
        this.interval = interval;
        this.timeline = timeline;
        this.thread = Thread.ofPlatform().daemon(true).name("poll-" + source).start(this::loop);
    }

    /**
     * Starts polling.
     *
     * @param port     health listener port
     * @param path     e.g. {@code /health/ready}
     * @param source   timeline source, e.g. {@code ready}
     * @param interval pause between polls
     * @param timeline where polls are recorded
     * @return the running poller; close it to stop
     */
    public static ProbePoller start(int port, String path, String source, Duration interval, Timeline timeline) {
        return new ProbePoller(port, path, source, interval, timeline);
    }

    /**
     * Polls so far.
     *
     * @return snapshot, in order
     */
    public List<Poll> polls() {
        return List.copyOf(polls);
    }

    private void loop() {
        while (running) {
            long sent = System.nanoTime();
            Poll poll;
            try (RawHttp connection = RawHttp.connect(port, null, source)) {
                RawHttp.Response response = connection.exchange("GET", path, Map.of("Connection", "close"), null);
                poll = new Poll(sent, System.nanoTime(), response.status(), response.body());
            } catch (ConnectException e) {
                poll = new Poll(sent, System.nanoTime(), 0, "refused");
            } catch (IOException e) {
                poll = new Poll(sent, System.nanoTime(), 0, String.valueOf(e.getMessage()));
            }
            polls.add(poll);
            timeline.addAt(sent, source, (poll.failed() ? "no answer: " : "status " + poll.status() + " ") + poll.body());
            try {
                Thread.sleep(interval);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Stops polling and waits for the last poll to finish. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(Duration.ofSeconds(5));
    }
}
