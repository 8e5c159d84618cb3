package com.example.payments.carddata;

import java.lang.management.ManagementFactory;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.sameInstance;

/**
 * Every log line goes through the masker: an ordinary line, one whose digit runs cannot hold a card number, costs no
 * allocation, whatever separators its numbers are written with.
 */
class PanDetectorAllocationTest {

    private static final List<String> LINES = List.of(
            "2026-12-01T05:11:36.413 INFO [4bf92f3577b34da6] com.example.payments.Main: status=201 duration_ms=0.2",
            "2026-12-01 05:11:36,413 WARNING [] upstream 10.0.0.1:8080, 10.0.0.2:8080, 192.168.100.200:5432",
            "[05:11:36.413456] INFO total 12.99, 45.00, 100.00, 7.50, 1,299.00 EUR; 3 items",
            "2026-12-01T05:11:36.413 FINE [] dates 2026-12-01, 2026-12-02, 2026-12-03 Java 21.0.5+11-LTS",
            "2026-12-01T05:11:36.413 INFO [] processed 1\u202F234\u202F567 records in 12.5 s from +49 152 5946985");

    @Test
    void maskingOrdinaryLogLinesAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 20_000; i++) {
            for (String line : LINES) {
                assertThat(PanDetector.mask(line), sameInstance(line));
            }
        }
        String[] lines = LINES.toArray(String[]::new); // an array: a list's iterator would be allocated per loop
        int calls = 10_000 * lines.length;
        long before = threads.getCurrentThreadAllocatedBytes();
        int unchanged = 0;
        for (int i = 0; i < 10_000; i++) {
            for (String line : lines) {
                if (PanDetector.mask(line) == line) {
                    unchanged++;
                }
            }
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(unchanged, is(calls));
        // One object per call would be at least 16 bytes each: 800 KB.
        assertThat("bytes allocated for " + calls + " lines", allocated, lessThan(calls / 10L));
    }
}
