import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import com.sun.jdi.Bootstrap;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.connect.IllegalConnectorArgumentsException;

import org.jacoco.cli.internal.core.analysis.Analyzer;
import org.jacoco.cli.internal.core.analysis.CoverageBuilder;
import org.jacoco.cli.internal.core.analysis.IClassCoverage;
import org.jacoco.cli.internal.core.data.ExecutionData;
import org.jacoco.cli.internal.core.data.ExecutionDataStore;
import org.jacoco.cli.internal.core.tools.ExecDumpClient;
import org.jacoco.cli.internal.core.tools.ExecFileLoader;

/**
 * The client half of {@code scripts/request-walk.sh}: against a service started with the JaCoCo agent in tcpserver
 * mode, resets the coverage at a quiet moment, sends exactly one {@code POST /v1/authorizations}, dumps the coverage
 * and lists the project classes with any line executed, nested classes listed separately and folded into their
 * source file for the count.
 *
 * <p>Other threads run project code on their own schedule: the background workers (idempotency sweeper,
 * authorization expiry, unknown-outcome reconciler, every second), the loopback prober ({@code GET /ping} every
 * 0.5 s), the idempotency lease renewer and the listeners' request-deadline sweepers. Through the service's JDWP port
 * they are suspended, each while it waits between two runs, from before the reset until after the dump, so that only
 * the request's own threads (its connection's, its virtual thread, Log4j's writer of its access-log line) are
 * counted; a window in which {@code PeriodicWorker}, the loopback prober or the lease renewer ran anyway is refused
 * (exit 3: the script starts a fresh service and tries again).
 *
 * <p>Run with the JaCoCo CLI jar ({@code org.jacoco.cli}, classifier {@code nodeps}) on the class path, whose copy of
 * JaCoCo's core API (under {@code org.jacoco.cli.internal.core}, shaded with ASM) it uses:
 * {@code java -cp jacococli.jar scripts/RequestWalk.java JACOCO_PORT JDWP_PORT BUSINESS_PORT JAR OUT_DIR}.
 * Writes {@code OUT_DIR/request.exec} (readable by {@code jacococli report}) and {@code OUT_DIR/classes.txt}.
 */
public final class RequestWalk {

    private static final String HOST = "127.0.0.1";
    private static final String PREFIX = "com/example/payments/";
    // The threads that run project code on their own schedule, paused for the request: the workers of
    // BackgroundWorkers (named after their heartbeats), the loopback prober (GET /ping), the idempotency lease renewer
    // and both listeners' request-deadline sweepers.
    private static final Set<String> BACKGROUND_THREADS = Set.of("idempotency-sweeper", "authorization-expiry",
            "unknown-outcome-reconciler", "loopback-prober", "idempotency-lease-renewer",
            "business-request-deadlines", "health-request-deadlines");
    // Classes only the background runs: any of them in the window means it was not the request alone.
    private static final Set<String> BACKGROUND = Set.of(PREFIX + "lifecycle/PeriodicWorker",
                                                         PREFIX + "health/LoopbackProber",
                                                         PREFIX + "idempotency/LeaseRenewer");
    private static final String DEV_KEY = "pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg";
    private static final String BODY = "{\"merchantId\":\"m_123\",\"reference\":\"order-42\","
            + "\"amount\":{\"value\":1299,\"currency\":\"EUR\"},\"card\":{\"number\":\"4111111111111111\","
            + "\"expiryMonth\":12,\"expiryYear\":2030,\"cvc\":\"123\"}}";
    // After the response: the rest of the request's own work (its access log line, written by Log4j's thread).
    private static final Duration SETTLE = Duration.ofMillis(200);

    private RequestWalk() {
    }

    public static void main(String[] args) throws Exception {
        int jacocoPort = Integer.parseInt(args[0]);
        int jdwpPort = Integer.parseInt(args[1]);
        int businessPort = Integer.parseInt(args[2]);
        File jar = new File(args[3]);
        Path out = Path.of(args[4]);

        VirtualMachine vm = attach(jdwpPort);
        List<ThreadReference> paused = pauseBackground(vm);
        ExecDumpClient reset = new ExecDumpClient();
        reset.setDump(true);
        reset.setReset(true);
        reset.dump(HOST, jacocoPort);

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + businessPort
                                                             + "/v1/authorizations"))
                .header("Authorization", "Bearer " + DEV_KEY)
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", "\"walk-" + UUID.randomUUID() + "\"")
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(BODY, StandardCharsets.UTF_8))
                .build();
        long sent = System.nanoTime();
        HttpResponse<String> response = http.send(post, HttpResponse.BodyHandlers.ofString());
        System.err.printf("answered %d in %d ms%n", response.statusCode(), (System.nanoTime() - sent) / 1_000_000);
        Thread.sleep(SETTLE);
        ExecDumpClient dump = new ExecDumpClient();
        dump.setDump(true);
        dump.setReset(false);
        ExecFileLoader window = dump.dump(HOST, jacocoPort);
        paused.forEach(ThreadReference::resume);
        vm.dispose();
        if (response.statusCode() != 201) {
            System.err.println("POST /v1/authorizations answered " + response.statusCode() + ": " + response.body());
            System.exit(1);
        }
        Set<String> background = new TreeSet<>();
        for (ExecutionData data : window.getExecutionDataStore().getContents()) {
            if (BACKGROUND.contains(data.getName()) && data.hasHits()) {
                background.add(data.getName());
            }
        }
        if (!background.isEmpty()) {
            System.err.println("a background worker ran during the request (" + background + "): not counted");
            System.exit(3);
        }
        window.save(out.resolve("request.exec").toFile(), false);
        report(window.getExecutionDataStore(), jar, out.resolve("classes.txt"));
    }

    private static VirtualMachine attach(int port) throws IOException, IllegalConnectorArgumentsException {
        AttachingConnector socket = Bootstrap.virtualMachineManager().attachingConnectors().stream()
                .filter(connector -> connector.name().equals("com.sun.jdi.SocketAttach"))
                .findFirst().orElseThrow();
        Map<String, Connector.Argument> arguments = socket.defaultArguments();
        arguments.get("hostname").setValue(HOST);
        arguments.get("port").setValue(String.valueOf(port));
        return socket.attach(arguments);
    }

    // Suspends each background thread while it waits between two runs (never in the middle of one, where it could
    // hold a lock the request needs); gives up after 5 s.
    private static List<ThreadReference> pauseBackground(VirtualMachine vm) throws InterruptedException {
        List<ThreadReference> paused = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        for (ThreadReference thread : vm.allThreads()) {
            if (!BACKGROUND_THREADS.contains(thread.name())) {
                continue;
            }
            while (true) {
                thread.suspend();
                int status = thread.status();
                if (status == ThreadReference.THREAD_STATUS_SLEEPING || status == ThreadReference.THREAD_STATUS_WAIT) {
                    paused.add(thread);
                    break;
                }
                thread.resume();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("thread " + thread.name() + " never paused between runs");
                }
                Thread.sleep(5);
            }
        }
        if (paused.size() != BACKGROUND_THREADS.size()) {
            throw new IllegalStateException("background threads found: " + paused.size() + " of "
                                            + BACKGROUND_THREADS);
        }
        return paused;
    }

    private static void report(ExecutionDataStore store, File jar, Path file) throws IOException {
        CoverageBuilder coverage = new CoverageBuilder();
        new Analyzer(store, coverage).analyzeAll(jar);
        // Source file (package/File.java) -> its executed classes, the top-level one first.
        Map<String, Set<String>> files = new TreeMap<>();
        for (IClassCoverage type : coverage.getClasses()) {
            if (type.getName().startsWith(PREFIX) && type.getLineCounter().getCoveredCount() > 0) {
                String source = type.getPackageName() + "/" + type.getSourceFileName();
                files.computeIfAbsent(source, k -> new TreeSet<>()).add(type.getName());
            }
        }
        int classes = files.values().stream().mapToInt(Set::size).sum();
        try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(file))) {
            for (Map.Entry<String, Set<String>> entry : files.entrySet()) {
                String top = entry.getKey().replace('/', '.').replaceFirst("\\.java$", "");
                StringBuilder line = new StringBuilder(top.substring("com.example.payments.".length()));
                if (!entry.getValue().contains(top.replace('.', '/'))) {
                    line.append(" (itself not run)");
                }
                for (String name : entry.getValue()) {
                    String dotted = name.replace('/', '.');
                    if (!dotted.equals(top)) {
                        line.append(' ').append(dotted.substring(top.length()));
                    }
                }
                writer.println(line);
            }
            writer.println(files.size() + " source files, " + classes + " classes with nested ones");
        }
        System.out.print(Files.readString(file));
    }
}
