package com.example.payments.authorization;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.example.payments.idempotency.StoreFullException;

/**
 * {@link UnknownOutcomes} in this process's memory, for development on one replica: lost on restart (then nothing
 * reverses the attempts it held). Bounded: beyond {@code maxOutcomes} a record is refused ({@link StoreFullException})
 * and the outcome stays unknown until the client retries.
 */
public final class InMemoryUnknownOutcomes implements UnknownOutcomes {

    private final Map<String, UnknownOutcome> outcomes = new ConcurrentHashMap<>();
    private final int maxOutcomes;

    private InMemoryUnknownOutcomes(int maxOutcomes) {
        this.maxOutcomes = maxOutcomes;
    }

    /**
     * Creates the store.
     *
     * @param maxOutcomes records held at most, e.g. {@code authorization.in-memory.max-resources}
     * @return the store
     */
    public static InMemoryUnknownOutcomes create(int maxOutcomes) {
        return new InMemoryUnknownOutcomes(maxOutcomes);
    }

    @Override
    public void record(UnknownOutcome outcome) {
        if (outcomes.size() >= maxOutcomes && !outcomes.containsKey(outcome.attemptId())) {
            throw new StoreFullException("unknown outcomes: " + maxOutcomes + " held");
        }
        outcomes.put(outcome.attemptId(), outcome);
    }

    @Override
    public List<UnknownOutcome> due(Instant now, int limit) {
        return outcomes.values().stream()
                .filter(outcome -> !outcome.reverseAt().isAfter(now))
                .sorted(Comparator.comparing(UnknownOutcome::reverseAt))
                .limit(limit)
                .toList();
    }

    @Override
    public List<UnknownOutcome> ofResource(String resourceId) {
        return outcomes.values().stream().filter(outcome -> outcome.resourceId().equals(resourceId)).toList();
    }

    @Override
    public boolean remove(String attemptId) {
        return outcomes.remove(attemptId) != null;
    }

    @Override
    public long countDueBefore(Instant before) {
        return outcomes.values().stream().filter(outcome -> outcome.reverseAt().isBefore(before)).count();
    }
}
