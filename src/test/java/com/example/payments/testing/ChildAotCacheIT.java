package com.example.payments.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An AOT cache's training run ({@link ChildAotCache}, the service's and the issuer simulator's) leaves nothing behind when it is cut short: on JDK 25 a JVM
 * started with {@code -XX:AOTCacheOutput} writes the cache at exit by starting a JVM of its own, which assembles it
 * (tens of seconds on a loaded machine). {@link ChildAotCache} gives a training run 180 s to exit and then closes it;
 * closing must stop that assembling JVM too, or it outlives the test JVM, burns a core beside the tests and writes a
 * cache of some 50 MB into {@code target/child-aot} after the training run's file was deleted.
 */
class ChildAotCacheIT {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"service", "issuer simulator"})
    void closingTheTrainingRunStopsTheJvmThatAssemblesTheCache(String child, @TempDir Path dir) throws Exception {
        assumeTrue(Runtime.version().feature() >= 25, "AOT cache output needs JDK 25");
        Path output = dir.resolve("child.aot");
        List<ProcessHandle> assemblers;
        boolean service = child.equals("service");
        try (AutoCloseable training = service ? ServiceProcess.startTraining(output)
                                              : IssuerSimulatorProcess.startTraining(output)) {
            ProcessHandle trainer;
            if (training instanceof ServiceProcess process) {
                process.awaitReady(Duration.ofSeconds(60));
                trainer = ProcessHandle.of(process.pid()).orElseThrow();
                process.signal("TERM");
            } else {
                IssuerSimulatorProcess issuer = (IssuerSimulatorProcess) training;
                trainer = ProcessHandle.of(issuer.pid()).orElseThrow();
                issuer.signal("TERM");
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            assemblers = List.of();
            while (assemblers.isEmpty() && trainer.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
                assemblers = trainer.descendants().toList();
            }
            assertThat("the training run starts a JVM that assembles the cache (JDK 25's AOTCacheOutput)",
                       assemblers.isEmpty(), is(false));
            // What ChildAotCache does when the training run has not exited within its EXIT_WAIT: close it.
        }
        Thread.sleep(2000);
        List<String> alive = assemblers.stream().filter(Leftovers::running)
                .map(handle -> handle.pid() + " " + handle.info().commandLine().orElse("?")).toList();
        assemblers.forEach(ProcessHandle::destroyForcibly);
        assertThat("the cache's assembling JVM outlived the closed training run", alive, is(empty()));
        assertThat("nothing written after the close", Files.exists(output), is(false));
    }
}
