package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.idempotency.IdempotencyStore;

/**
 * The expiry worker's unit of work (run by the {@code authorization-expiry} worker, whose heartbeat liveness watches):
 * releases the uncaptured remainder of approved authorizations past their {@code expiresAt}.
 *
 * <p>A run claims a batch ({@link AuthorizationStore#claimExpired}: replicas running it side by side never take the
 * same authorization, so no void is sent twice by two of them) and expires the batch's authorizations concurrently,
 * at most {@code parallelism} at a time, each on a virtual thread; while batches come back full and the run's budget
 * of 5 s lasts, it claims the next one. The heartbeat is touched each time an authorization is done, so a long run
 * still beats while it makes progress, and a hung one stops beating.
 *
 * <p>Each is one {@link Lifecycle} transition like a void: reserve, a void to the acquirer with an attempt id derived
 * from the authorization (a retry after an unknown outcome sends the same one), settle: {@code EXPIRED} whatever the
 * acquirer answered the void, since nothing is capturable past the validity. A capture or a void still pending (its
 * client's 502 or 504 never retried) refuses the reservation: it is sent again first, with its own attempt id (a
 * deduplicating acquirer answers it as it did the first time), and settled, then the authorization is expired. Once
 * a void fails or times out, the run starts no further one. What a run claimed but did not expire
 * (refused, unknown outcome, not started) stays claimed until the lease lapses, then is claimed again.
 */
public final class Expiry implements Runnable {

    private static final System.Logger LOGGER = System.getLogger(Expiry.class.getName());

    private static final Duration RUN_BUDGET = Duration.ofSeconds(5);

    private final AuthorizationStore store;
    private final BoundedAuthorizer authorizer;
    private final Clock clock;
    private final Settings settings;
    private final Runnable beat;
    private volatile boolean failing;

    private Expiry(AuthorizationStore store, BoundedAuthorizer authorizer, Clock clock, Settings settings,
                   Runnable beat) {
        this.store = store;
        this.authorizer = authorizer;
        this.clock = clock;
        this.settings = settings;
        this.beat = beat;
    }

    /**
     * How much a run takes on.
     *
     * @param batch       authorizations claimed at once, at least 1, e.g. 100
     * @param parallelism authorizations expired at once, at least 1, e.g. 4 (each holds a database connection during
     *                    its reserve and settle steps, and an acquirer call in between)
     * @param lease       how long a claim holds: longer than a run's budget (5 s) plus one expiry (two store
     *                    statements and a bounded acquirer call), e.g. 30 s + 2 x {@code authorizer.timeout}
     */
    public record Settings(int batch, int parallelism, Duration lease) {

        /**
         * Checks the values.
         *
         * @throws IllegalArgumentException when {@code batch} or {@code parallelism} is below 1, or the lease is not
         *                                  longer than 5 s
         */
        public Settings {
            if (batch < 1 || parallelism < 1 || lease.compareTo(RUN_BUDGET) <= 0) {
                throw new IllegalArgumentException("expiry: batch and parallelism >= 1, lease > " + RUN_BUDGET);
            }
        }
    }

    /**
     * Creates the work.
     *
     * @param store          the resource store
     * @param authorizations the API: its bounded authorizer sends the voids
     * @param clock          the time
     * @param settings       batch, parallelism, lease
     * @param beat           touched each time an authorization is done (the worker's heartbeat)
     * @return the work, for {@code PeriodicWorker}
     */
    public static Expiry create(AuthorizationStore store, AuthorizationService authorizations, Clock clock,
                                Settings settings, Runnable beat) {
        return create(store, authorizations.authorizer(), clock, settings, beat);
    }

    // The same, with the bounded authorizer itself (tests).
    static Expiry create(AuthorizationStore store, BoundedAuthorizer authorizer, Clock clock, Settings settings,
                         Runnable beat) {
        return new Expiry(store, authorizer, clock, settings, beat);
    }

    @Override
    public void run() {
        long deadline = System.nanoTime() + RUN_BUDGET.toNanos();
        try {
            boolean more = true;
            while (more && System.nanoTime() < deadline) {
                Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
                List<AuthorizationRecord> claimed = store.claimExpired(now, settings.batch(), settings.lease());
                more = expireAll(claimed, now, deadline) && claimed.size() == settings.batch();
            }
            if (failing) {
                failing = false;
                LOGGER.log(Level.INFO, "Authorization expiry works again");
            }
        } catch (IdempotencyStore.UnavailableException e) {
            storeFailed(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // False when a void failed and the rest waits for a later run; throws when the store failed.
    private boolean expireAll(List<AuthorizationRecord> claimed, Instant now, long deadline)
            throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<IdempotencyStore.UnavailableException> storeFailure = new AtomicReference<>();
        Semaphore permits = new Semaphore(settings.parallelism());
        // close() waits for every started expiry: each is bounded by the store's and the acquirer's timeouts.
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (AuthorizationRecord authorization : claimed) {
                permits.acquire();
                if (stop.get() || System.nanoTime() > deadline) {
                    permits.release();
                    stop.set(true);
                    break;
                }
                executor.execute(() -> {
                    try {
                        if (!expire(authorization, now)) {
                            stop.set(true);
                        }
                    } catch (IdempotencyStore.UnavailableException e) {
                        storeFailure.set(e);
                        stop.set(true);
                    } catch (InterruptedException e) {
                        stop.set(true);
                    } catch (RuntimeException e) {
                        LOGGER.log(Level.WARNING, "Expiry of " + authorization.id() + " failed", e);
                        stop.set(true);
                    } finally {
                        permits.release();
                        beat.run();
                    }
                });
            }
        }
        if (storeFailure.get() != null) {
            throw storeFailure.get();
        }
        return !stop.get();
    }

    private void storeFailed(IdempotencyStore.UnavailableException e) {
        if (!failing) {
            failing = true;
            LOGGER.log(Level.WARNING, "Authorization expiry failed, retrying every run: " + e.getMessage());
        }
    }

    private boolean expire(AuthorizationRecord authorization, Instant now) throws InterruptedException {
        byte[] name = ("expiry:" + authorization.id()).getBytes(StandardCharsets.UTF_8);
        String id = UUID.nameUUIDFromBytes(name).toString();
        OperationRecord pending = new OperationRecord(id, OperationRecord.EXPIRY, authorization.id(),
                "exp_" + id.replace("-", ""), authorization.merchantId(),
                new Amount(0, authorization.amount().currency()), "PENDING", null, now);
        // A capture or a void a client left pending (its 502 or 504 never retried) holds the authorization: it is
        // sent again first, with its own attempt id, so that its reservation is applied or returned.
        for (int round = 0; round < 2; round++) {
            OperationRecord operation = switch (store.reserve(authorization.id(), pending, Integer.MAX_VALUE, now)) {
            case AuthorizationStore.Reserved reserved -> reserved.operation();
            // Pending: an earlier claim's void whose outcome stayed unknown; sent again with the same attempt id.
            case AuthorizationStore.Existing existing -> existing.operation().pending() ? existing.operation() : null;
            case AuthorizationStore.Refused refused -> null;
            case AuthorizationStore.NotFound notFound -> null;
            };
            if (operation != null) {
                return send(authorization, operation);
            }
            List<OperationRecord> left = store.pendingOperations(authorization.id());
            if (left.isEmpty()) {
                return true;
            }
            for (OperationRecord stranded : left) {
                if (!send(authorization, stranded)) {
                    return false;
                }
            }
        }
        return true;
    }

    // Sends a pending capture or void (the expiry's own is a void) and settles it; false when the outcome stays
    // unknown.
    private boolean send(AuthorizationRecord authorization, OperationRecord operation) throws InterruptedException {
        AcquirerOperation call = new AcquirerOperation(operation.attemptId(), authorization.attemptId(),
                                                       operation.amount().value(), operation.amount().currency());
        BoundedAuthorizer.Outcome outcome = operation.kind().equals(OperationRecord.CAPTURE)
                ? authorizer.capture(call) : authorizer.voidRemainder(call);
        if (outcome instanceof BoundedAuthorizer.Decided decided) {
            store.settle(operation, decided.decision().approved(), decided.decision().declineCode(),
                         clock.instant().truncatedTo(ChronoUnit.MILLIS));
            return true;
        }
        LOGGER.log(Level.WARNING, "Expiry of {0}: its pending {1} failed or timed out at the acquirer; sent again once "
                                  + "its claim lapses", authorization.id(), operation.kind());
        return false;
    }
}
