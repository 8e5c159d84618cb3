package com.example.payments.authorization;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

import com.example.payments.idempotency.IdempotencyStore;

/**
 * The expiry worker's unit of work (run by the {@code authorization-expiry} worker, whose heartbeat liveness watches):
 * releases the uncaptured remainder of approved authorizations past their {@code expiresAt}, at most a batch per run.
 * Each is one {@link Lifecycle} transition like a void: reserve (refused while a capture or a void is pending; the
 * next run tries again), a void to the acquirer with an attempt id derived from the authorization (a retry after an
 * unknown outcome sends the same one), settle: {@code EXPIRED} whatever the acquirer answered the void, since nothing
 * is capturable past the validity. Replicas may run it side by side: the reservation lets one of them through.
 */
public final class Expiry implements Runnable {

    private static final System.Logger LOGGER = System.getLogger(Expiry.class.getName());

    private static final java.time.Duration RUN_BUDGET = java.time.Duration.ofSeconds(5);

    private final AuthorizationStore store;
    private final BoundedAuthorizer authorizer;
    private final Clock clock;
    private final int batch;
    private volatile boolean failing;

    private Expiry(AuthorizationStore store, BoundedAuthorizer authorizer, Clock clock, int batch) {
        this.store = store;
        this.authorizer = authorizer;
        this.clock = clock;
        this.batch = batch;
    }

    /**
     * Creates the work.
     *
     * @param store          the resource store
     * @param authorizations the API: its bounded authorizer sends the voids
     * @param clock          the time
     * @param batch          authorizations per run at most, e.g. 100
     * @return the work, for {@code PeriodicWorker}
     */
    public static Expiry create(AuthorizationStore store, AuthorizationService authorizations, Clock clock,
                                int batch) {
        return new Expiry(store, authorizations.authorizer(), clock, batch);
    }

    @Override
    public void run() {
        try {
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            long deadline = System.nanoTime() + RUN_BUDGET.toNanos();
            for (AuthorizationRecord authorization : store.expired(now, batch)) {
                // A run ends early when the acquirer fails, or after its budget: the heartbeat is touched between
                // runs, and the rest waits for the next one.
                if (!expire(authorization, now) || System.nanoTime() > deadline) {
                    break;
                }
            }
            if (failing) {
                failing = false;
                LOGGER.log(Level.INFO, "Authorization expiry works again");
            }
        } catch (IdempotencyStore.UnavailableException e) {
            if (!failing) {
                failing = true;
                LOGGER.log(Level.WARNING, "Authorization expiry failed, retrying every run: " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean expire(AuthorizationRecord authorization, Instant now) throws InterruptedException {
        byte[] name = ("expiry:" + authorization.id()).getBytes(StandardCharsets.UTF_8);
        String id = UUID.nameUUIDFromBytes(name).toString();
        OperationRecord pending = new OperationRecord(id, OperationRecord.EXPIRY, authorization.id(),
                "exp_" + id.replace("-", ""), authorization.merchantId(),
                new Amount(0, authorization.amount().currency()), "PENDING", null, now);
        OperationRecord operation = switch (store.reserve(authorization.id(), pending, Integer.MAX_VALUE, now)) {
        case AuthorizationStore.Reserved reserved -> reserved.operation();
        case AuthorizationStore.Existing existing -> existing.operation().pending() ? existing.operation() : null;
        case AuthorizationStore.Refused refused -> null;
        case AuthorizationStore.NotFound notFound -> null;
        };
        if (operation == null) {
            return true;
        }
        AcquirerOperation call = new AcquirerOperation(operation.attemptId(), authorization.attemptId(),
                                                       operation.amount().value(), operation.amount().currency());
        if (authorizer.voidRemainder(call) instanceof BoundedAuthorizer.Decided decided) {
            store.settle(operation, decided.decision().approved(), decided.decision().declineCode(),
                         clock.instant().truncatedTo(ChronoUnit.MILLIS));
            return true;
        }
        LOGGER.log(Level.WARNING, "Expiry void of {0} failed or timed out; the next run sends it again",
                   authorization.id());
        return false;
    }
}
