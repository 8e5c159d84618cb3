package com.example.payments.lifecycle;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/**
 * The console under System.out and System.err: what a request thread writes reaches the console whole, in order,
 * without the request thread waiting for the console; drain() is what the shutdown relies on for its last lines.
 */
class ConsoleWriterTest {

    @Test
    void linesFromManyVirtualThreadsArriveWholeAndEachThreadsInOrder() throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        ConsoleWriter writer = new ConsoleWriter(console, "console-test");
        int threads = 50;
        int lines = 2_000;
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                executor.submit(() -> {
                    for (int i = 0; i < lines; i++) {
                        writer.write(("t" + thread + " line " + i + "\n").getBytes(StandardCharsets.UTF_8));
                        writer.flush();
                    }
                    return null;
                });
            }
        }
        assertThat(writer.drain(), is(true));

        List<String> written = console.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(written.size(), is(threads * lines));
        int[] next = new int[threads];
        for (String line : written) {
            String[] parts = line.split(" ");
            int thread = Integer.parseInt(parts[0].substring(1));
            assertThat(line, parts.length, is(3));
            assertThat("order of thread " + thread, Integer.parseInt(parts[2]), is(next[thread]++));
        }
        for (int count : next) {
            assertThat(count, is(lines));
        }
    }

    @Test
    void drainWaitsForWhatWasWrittenBeforeIt() throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        ConsoleWriter writer = new ConsoleWriter(console, "console-test");

        writer.write("the last line before exit\n".getBytes(StandardCharsets.UTF_8));
        assertThat(writer.drain(), is(true));

        assertThat(console.toString(StandardCharsets.UTF_8), is("the last line before exit\n"));
    }

    @Test
    void afterTheShutdownHooksDrainItWritesGoStraightThroughInOrder() throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        ConsoleWriter writer = new ConsoleWriter(console, "console-test");
        writer.write("before the hook\n".getBytes(StandardCharsets.UTF_8));

        writer.drainAndWriteThrough();
        writer.write("from another hook\n".getBytes(StandardCharsets.UTF_8));

        // No drain, no wait: the second line is on the console when write returns.
        assertThat(console.toString(StandardCharsets.UTF_8), is("before the hook\nfrom another hook\n"));
    }

    @Test
    void aLineWrittenAloneReachesTheConsoleWithoutAFlush() throws Exception {
        CountDownLatch arrived = new CountDownLatch(1);
        OutputStream console = new OutputStream() {
            @Override
            public void write(int b) {
                arrived.countDown();
            }

            @Override
            public void write(byte[] b, int off, int len) {
                arrived.countDown();
            }
        };
        ConsoleWriter writer = new ConsoleWriter(console, "console-test");

        writer.write("alone\n".getBytes(StandardCharsets.UTF_8));

        // The batching window is 10 ms; 10 s only bounds a machine that stalls.
        assertThat(arrived.await(10, TimeUnit.SECONDS), is(true));
    }

    @Test
    void aConsoleThatStopsReadingMakesWritersWaitInsteadOfDroppingOrGrowing() throws Exception {
        CountDownLatch open = new CountDownLatch(1);
        List<byte[]> received = new ArrayList<>();
        OutputStream stuckConsole = new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public synchronized void write(byte[] b, int off, int len) {
                try {
                    open.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                received.add(Arrays.copyOfRange(b, off, off + len));
            }
        };
        ConsoleWriter writer = new ConsoleWriter(stuckConsole, "console-test");
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'x');
        AtomicBoolean finished = new AtomicBoolean();
        Thread producer = Thread.ofVirtual().start(() -> {
            for (int i = 0; i < 40; i++) { // 2.5 MiB: more than the writer holds while the console is stuck
                writer.write(chunk, 0, chunk.length);
            }
            finished.set(true);
        });

        producer.join(500);
        assertThat("the producer waits while 1 MiB is pending", finished.get(), is(false));
        open.countDown();
        producer.join(10_000);
        assertThat(finished.get(), is(true));
        assertThat(writer.drain(), is(true));
        synchronized (stuckConsole) {
            assertThat(received.stream().mapToInt(b -> b.length).sum(), is(40 * chunk.length));
        }
    }
}
