package payments.loadtest;

import static io.gatling.javaapi.core.CoreDsl.StringBody;
import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.scenario;
import static io.gatling.javaapi.core.CoreDsl.stopLoadGeneratorIf;
import static io.gatling.javaapi.http.HttpDsl.header;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.status;

import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Session;
import io.gatling.javaapi.core.Simulation;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load tests' open-model client (rolling restart, drain, the warm-up of their clusters): a constant arrival rate
 * of one-request virtual users to one port on 127.0.0.1 (HAProxy's, or an instance's own), whatever happens to earlier
 * requests (a stalled server shows up as latency, not as less load).
 *
 * <p>Every user sends one request: every {@code pingEvery}-th is {@code GET /ping}, the others
 * {@code POST /v1/authorizations} with a fresh {@code Idempotency-Key} that is never sent again. No retries (Gatling
 * never retries on its own). Each request's outcome goes to one row of a CSV ({@code seq,method,key,due_ms,
 * start_ms,end_ms,latency_ms,status,error,backend,replayed,reused_conn}; epoch milliseconds; {@code reused_conn} is
 * always empty: Gatling does not say), which {@code loadstats.py} and the reports read.
 *
 * <p>Stopping early (the drain scenario stops the load a second after the instance it drains has exited): once the
 * file {@code lt.stopFile} exists, no new user sends a request, and the first user to arrive when none is in flight
 * stops the load generator; every request sent has its row by then.
 *
 * <p>Schedule check: user {@code seq} is due at {@code t0 + seq / rate} ({@code constantUsersPerSec} without
 * {@code randomized()} spaces users evenly). The simulation writes t0 = the first user's start; {@code loadstats.py
 * rebase} then moves t0 to the latest origin at which no user started before its due time (the injector's own
 * origin is not visible from a scenario). {@code start_ms - due_ms} is the client's lag. A level whose lag p99 exceeds the limit in {@code lib.sh} is marked invalid: there the client, not the service,
 * was the bottleneck. Latency is {@code end_ms - due_ms}, so a client falling behind cannot hide latency either
 * (no coordinated omission).
 *
 * <p>System properties: {@code lt.port} (HAProxy's port, required), {@code lt.rate} (users/s, required),
 * {@code lt.duration} (s, required), {@code lt.out} (CSV path, required), {@code lt.keyPrefix} (default: a random
 * one), {@code lt.pingEvery} (default 10; 0: no pings), {@code lt.timeoutMs} (per request, default 20000),
 * {@code lt.stopFile} (default: none, the load runs for its whole duration), {@code lt.offRecordS} (s, default 0:
 * the users of the load's first seconds are sent at the same rate on the same connections but get no row, so a
 * warm-up at the level's own rate runs without a client restart between it and the measured load; {@code
 * lt.duration} includes them).
 */
public class OpenModelSimulation extends Simulation {

    // The development key of config/dev (merchant m_123); lib.sh starts the instances with its hash.
    private static final String AUTHORIZATION = "Bearer pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg";
    private static final String BODY = "{\"merchantId\":\"m_123\",\"reference\":\"load-%d\",\"amount\":{\"value\":%d,"
            + "\"currency\":\"EUR\"},\"card\":{\"number\":\"4111111111111111\",\"expiryMonth\":12,"
            + "\"expiryYear\":2030,\"cvc\":\"123\"}}";

    private final int port = Integer.getInteger("lt.port", 0);
    private final double rate = Double.parseDouble(System.getProperty("lt.rate", "0"));
    private final double durationS = Double.parseDouble(System.getProperty("lt.duration", "0"));
    private final String keyPrefix = System.getProperty("lt.keyPrefix",
            Long.toHexString(Double.doubleToLongBits(Math.random())).substring(0, 12));
    private final int pingEvery = Integer.getInteger("lt.pingEvery", 10);
    private final int timeoutMs = Integer.getInteger("lt.timeoutMs", 20_000);
    private final Path out = Path.of(System.getProperty("lt.out", "requests.csv"));
    private final long offRecordUsers = Math.round(
            Double.parseDouble(System.getProperty("lt.offRecordS", "0")) * Double.parseDouble(
                    System.getProperty("lt.rate", "0")));
    private final Path stopFile = System.getProperty("lt.stopFile", "").isEmpty()
            ? null : Path.of(System.getProperty("lt.stopFile"));
    private volatile boolean stopping;
    private final AtomicLong inFlight = new AtomicLong();
    private boolean firstRowFlushed;   // guarded by csv

    private final AtomicLong nextSeq = new AtomicLong();
    private final AtomicLong t0Nanos = new AtomicLong(Long.MIN_VALUE);
    // epoch ms = (nanoTime - nanoBase) / 1e6 + epochBase: one monotonic clock for due, start and end
    private final long nanoBase = System.nanoTime();
    private final double epochBase = System.currentTimeMillis();
    private final BufferedWriter csv;

    {
        if (port <= 0 || rate <= 0 || durationS <= 0) {
            throw new IllegalArgumentException("set -Dlt.port, -Dlt.rate (users/s) and -Dlt.duration (s)");
        }
        try {
            csv = Files.newBufferedWriter(out);
            csv.write("seq,method,key,due_ms,start_ms,end_ms,latency_ms,status,error,backend,replayed,reused_conn\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private double epochMs(long nanos) {
        return (nanos - nanoBase) / 1e6 + epochBase;
    }

    private boolean stopping() {
        if (!stopping && stopFile != null && Files.exists(stopFile)) {
            stopping = true;
        }
        return stopping;
    }

    /**
     * First action of every user: its sequence number, its due time on the schedule and the time it started; or,
     * once the stop file exists, {@code skip} (counted in flight first and checked after, so that the user who stops
     * the generator cannot overtake one about to send).
     */
    private Session begin(Session session) {
        inFlight.incrementAndGet();
        if (stopping()) {
            inFlight.decrementAndGet();
            return session.set("skip", true);
        }
        long now = System.nanoTime();
        long seq = nextSeq.getAndIncrement();
        t0Nanos.compareAndSet(Long.MIN_VALUE, now);
        long due = t0Nanos.get() + Math.round(seq * 1e9 / rate);
        boolean ping = pingEvery > 0 && seq % pingEvery == 0;
        return session.setAll(java.util.Map.of(
                "skip", false, "seq", seq, "due", due, "start", now, "ping", ping,
                "key", ping ? "" : keyPrefix + "-" + seq,
                "body", String.format(Locale.ROOT, BODY, seq, 100 + seq % 9000)));
    }

    /** Last action of every user: one CSV row. Gatling marks failed requests KO but runs this step anyway. */
    private Session record(Session session) {
        long end = System.nanoTime();
        long due = session.getLong("due");
        long start = session.getLong("start");
        int status = session.contains("status") ? session.getInt("status") : 0;
        String error = "";
        if (status == 0) {
            error = (end - start) / 1_000_000 >= timeoutMs ? "timeout" : "no_response";
        }
        if (session.getLong("seq") < offRecordUsers) {
            inFlight.decrementAndGet();
            return session;
        }
        String row = String.format(Locale.ROOT, "%d,%s,%s,%.1f,%.1f,%.1f,%.2f,%d,%s,%s,%s,\n",
                session.getLong("seq"), session.getBoolean("ping") ? "GET" : "POST", session.getString("key"),
                epochMs(due), epochMs(start), epochMs(end), (end - due) / 1e6, status, error,
                session.contains("backend") ? session.getString("backend") : "",
                session.contains("replayed") ? session.getString("replayed") : "");
        synchronized (csv) {
            try {
                csv.write(row);
                if (!firstRowFlushed) {   // lib.sh waits for a first row on disk to know the load has begun
                    csv.flush();
                    firstRowFlushed = true;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        inFlight.decrementAndGet();
        return session;
    }

    private final HttpProtocolBuilder protocol = http
            .baseUrl("http://127.0.0.1:" + port)
            // one keep-alive pool for all users (like a payment gateway's client), not one connection per user
            .shareConnections()
            .disableFollowRedirect()
            .disableCaching()
            .disableWarmUp();

    private final ChainBuilder post = io.gatling.javaapi.core.CoreDsl.exec(http("POST /v1/authorizations")
            .post("/v1/authorizations")
            .header("Authorization", AUTHORIZATION)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", session -> "\"" + session.getString("key") + "\"")
            .body(StringBody(session -> session.getString("body")))
            .requestTimeout(java.time.Duration.ofMillis(timeoutMs))
            .check(status().saveAs("status"),
                    header("X-Backend").optional().saveAs("backend"),
                    header("Idempotent-Replayed").optional().saveAs("replayed"),
                    status().in(200, 201)));

    private final ChainBuilder ping = io.gatling.javaapi.core.CoreDsl.exec(http("GET /ping")
            .get("/ping")
            .requestTimeout(java.time.Duration.ofMillis(timeoutMs))
            .check(status().saveAs("status"),
                    header("X-Backend").optional().saveAs("backend"),
                    status().is(200)));

    private final ScenarioBuilder users = scenario("open model")
            .exec(this::begin)
            .exec(stopLoadGeneratorIf("stop file " + stopFile, session -> session.getBoolean("skip")
                    && inFlight.get() == 0))
            .exitHereIf(session -> session.getBoolean("skip"))
            .doIfOrElse(session -> session.getBoolean("ping")).then(ping).orElse(post)
            .exec(this::record);

    {
        setUp(users.injectOpen(constantUsersPerSec(rate).during(java.time.Duration.ofMillis(
                Math.round(durationS * 1000))))).protocols(protocol);
    }

    @Override
    public void after() {
        synchronized (csv) {
            try {
                csv.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        System.out.printf(Locale.ROOT, "lt: %d users started, CSV %s%n", nextSeq.get(), out);
    }
}
