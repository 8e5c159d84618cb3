package com.example.payments.issuer;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import io.helidon.metrics.api.Counter;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * The simulated issuer's counters, in the registry of the process it runs in ({@code _total} and
 * {@code scope="application"} added by Helidon). Incremented as events happen, so that a counter registered once per
 * process keeps counting whichever issuer instance made the event.
 */
final class IssuerMeters {

    /** What is counted. */
    enum Event {
        /** {@code issuer_authorizations_total{decision="approved"}}: one per attempt id. */
        APPROVED,
        /** {@code issuer_authorizations_total{decision="declined"}}: one per attempt id. */
        DECLINED,
        /** {@code issuer_duplicate_attempts_total}: a known attempt id answered from the ledger. */
        DUPLICATE_ATTEMPT,
        /** {@code issuer_unavailable_total}: answered as an unreachable issuer. */
        UNAVAILABLE,
        /** {@code issuer_payments_approved_more_than_once_total}: a business payment's second approval. */
        PAYMENT_APPROVED_MORE_THAN_ONCE,
        /** {@code issuer_attempt_conflicts_total}: a known attempt id presented for a different payment. */
        ATTEMPT_CONFLICT,
        /** {@code issuer_ledger_evictions_total}: an attempt id forgotten before its retention (ledger full). */
        EVICTION
    }

    private final Map<Event, Counter> counters = new EnumMap<>(Event.class);

    private IssuerMeters() {
    }

    /**
     * Registers the counters.
     *
     * @param meters the process's registry
     * @return the counters
     */
    static IssuerMeters create(MeterRegistry meters) {
        IssuerMeters created = new IssuerMeters();
        String authorizations = "Decisions made by the simulated issuer, one per attempt id";
        created.register(meters, Event.APPROVED, "issuer_authorizations", List.of(Tag.create("decision", "approved")),
                         authorizations);
        created.register(meters, Event.DECLINED, "issuer_authorizations", List.of(Tag.create("decision", "declined")),
                         authorizations);
        created.register(meters, Event.DUPLICATE_ATTEMPT, "issuer_duplicate_attempts", List.of(),
                         "Calls with an attempt id already decided, answered from the issuer's ledger");
        created.register(meters, Event.UNAVAILABLE, "issuer_unavailable", List.of(),
                         "Calls answered as an unreachable issuer (test card 4000000000000119)");
        created.register(meters, Event.PAYMENT_APPROVED_MORE_THAN_ONCE, "issuer_payments_approved_more_than_once",
                         List.of(), "Business payments approved under two or more attempt ids");
        created.register(meters, Event.ATTEMPT_CONFLICT, "issuer_attempt_conflicts", List.of(),
                         "Known attempt ids presented for a different business payment");
        created.register(meters, Event.EVICTION, "issuer_ledger_evictions", List.of(),
                         "Attempt ids dropped from the issuer's ledger before their retention because it was full");
        return created;
    }

    /**
     * No metrics (tests of the ledger).
     *
     * @return counters that count nothing
     */
    static IssuerMeters none() {
        return new IssuerMeters();
    }

    void count(Event event) {
        Counter counter = counters.get(event);
        if (counter != null) {
            counter.increment();
        }
    }

    private void register(MeterRegistry meters, Event event, String name, List<Tag> tags, String description) {
        counters.put(event, meters.getOrCreate(Counter.builder(name).tags(tags).description(description)));
    }
}
