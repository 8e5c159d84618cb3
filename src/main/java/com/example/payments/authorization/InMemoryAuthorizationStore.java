package com.example.payments.authorization;

import java.time.Instant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.idempotency.StoreFullException;

/**
 * {@link AuthorizationStore} in this process's memory: development and one replica only (a restart forgets every
 * authorization; staging and prod refuse it). Bounded by {@code authorization.in-memory.max-resources}, which
 * authorizations, captures and voids count against together: nothing is ever evicted (an evicted authorization could
 * be captured twice or lost), so beyond the bound a new authorization, capture or void is refused with
 * {@link StoreFullException} (503) and nothing is written. The expiry worker's void of an expired authorization
 * counts too but is never refused: there is at most one per authorization, and refusing it would leave the
 * remainder held at the acquirer past the validity.
 *
 * <p>{@link #claimExpired} reads two indexes of approved authorizations, those not claimed by their
 * {@code expiresAt} and those claimed by the end of the claim, so a run costs O((lapsed + claimed) &middot; log n),
 * not a walk over every authorization held under the lock the captures and voids take.
 */
public final class InMemoryAuthorizationStore implements AuthorizationStore {

    private final ConcurrentMap<String, AuthorizationRecord> authorizations = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, OperationRecord> operations = new ConcurrentHashMap<>();
    // Guarded by this: each authorization's pending operations, in reservation order.
    private final Map<String, List<String>> pendingByAuthorization = new HashMap<>();
    // The expiry worker's view of approved authorizations: not claimed, by expiresAt; claimed, by the claim's end. An
    // entry whose authorization left APPROVED stays until it is reached and is dropped then (see claimExpired).
    private final NavigableSet<Due> unclaimed = new ConcurrentSkipListSet<>(Due.ORDER);
    private final NavigableSet<Due> claimed = new ConcurrentSkipListSet<>(Due.ORDER);
    private final AtomicInteger size = new AtomicInteger();
    private final int maxResources;

    private InMemoryAuthorizationStore(int maxResources) {
        this.maxResources = maxResources;
    }

    /**
     * Creates an empty store.
     *
     * @param maxResources {@code authorization.in-memory.max-resources}, at least 1
     * @return the store
     * @throws IllegalArgumentException when {@code maxResources < 1}
     */
    public static InMemoryAuthorizationStore create(int maxResources) {
        if (maxResources < 1) {
            throw new IllegalArgumentException("maxResources must be >= 1");
        }
        return new InMemoryAuthorizationStore(maxResources);
    }

    @Override
    public AuthorizationRecord create(AuthorizationRecord authorization) {
        AuthorizationRecord existing = authorizations.get(authorization.id());
        if (existing != null) {
            return existing;
        }
        if (size.incrementAndGet() > maxResources) {
            size.decrementAndGet();
            throw full();
        }
        AuthorizationRecord winner = authorizations.putIfAbsent(authorization.id(), authorization);
        if (winner != null) {
            size.decrementAndGet();
            return winner;
        }
        if (authorization.state() == AuthorizationState.APPROVED) {
            unclaimed.add(new Due(authorization.expiresAt(), authorization.id()));
        }
        return authorization;
    }

    @Override
    public Optional<AuthorizationRecord> find(String id) {
        return Optional.ofNullable(authorizations.get(id));
    }

    // One lock for every reserve and settle step: each reads and writes an authorization and an operation together.
    @Override
    public synchronized Reservation reserve(String authorizationId, OperationRecord pending, int maxCaptures,
                                            Instant now) {
        OperationRecord existing = operations.get(pending.id());
        if (existing != null) {
            return new Existing(existing);
        }
        AuthorizationRecord authorization = authorizations.get(authorizationId);
        if (authorization == null) {
            return new NotFound();
        }
        boolean capture = pending.kind().equals(OperationRecord.CAPTURE);
        return switch (Lifecycle.reserve(authorization.position(), pending.operation(), pending.amount().value(),
                                         pending.amount().currency(), maxCaptures, now)) {
        case Lifecycle.Refused refused -> new Refused(refused);
        case Lifecycle.Allowed allowed -> {
            if (size.incrementAndGet() > maxResources && !pending.kind().equals(OperationRecord.EXPIRY)) {
                size.decrementAndGet();
                throw full();
            }
            Lifecycle.Position at = authorization.position();
            Lifecycle.Position reserved = new Lifecycle.Position(at.state(), at.amount(), at.currency(),
                    at.captured(), at.reserved() + (capture ? allowed.amount() : 0), at.voidPending() || !capture,
                    at.captures(), at.expiresAt());
            List<String> captures = new ArrayList<>(authorization.captures());
            if (capture) {
                captures.add(pending.id());
            }
            OperationRecord reservedOperation = new OperationRecord(pending.id(), pending.kind(), authorizationId,
                    pending.attemptId(), pending.merchantId(), new Amount(allowed.amount(), at.currency()),
                    "PENDING", null, pending.createdAt());
            authorizations.put(authorizationId, authorization.moved(reserved, captures, now));
            operations.put(pending.id(), reservedOperation);
            pendingByAuthorization.computeIfAbsent(authorizationId, id -> new ArrayList<>(1)).add(pending.id());
            yield new Reserved(reservedOperation);
        }
        };
    }

    @Override
    public synchronized OperationRecord settle(OperationRecord operation, boolean succeeded, String declineCode,
                                               Instant now) {
        OperationRecord current = operations.get(operation.id());
        if (current == null || !current.pending()) {
            return current == null ? operation : current;
        }
        AuthorizationRecord authorization = authorizations.get(current.authorizationId());
        Lifecycle.Position settled = Lifecycle.settle(authorization.position(), current.operation(),
                                                      current.amount().value(),
                                                      succeeded);
        authorizations.put(authorization.id(), authorization.moved(settled, authorization.captures(), now));
        OperationRecord done = current.settled(succeeded, declineCode);
        operations.put(done.id(), done);
        List<String> left = pendingByAuthorization.get(done.authorizationId());
        if (left != null && left.remove(done.id()) && left.isEmpty()) {
            pendingByAuthorization.remove(done.authorizationId());
        }
        return done;
    }

    @Override
    public synchronized List<OperationRecord> pendingOperations(String authorizationId) {
        return pendingByAuthorization.getOrDefault(authorizationId, List.of()).stream().map(operations::get).toList();
    }

    // Lapsed claims go back among the unclaimed at their expiresAt, then the unclaimed are taken from the head, oldest
    // expiry first, as the PostgreSQL store's ORDER BY expires_at does: O(lapsed + taken) set operations, never a walk
    // over every authorization.
    @Override
    public synchronized List<AuthorizationRecord> claimExpired(Instant now, int limit, Duration lease) {
        for (Iterator<Due> lapsed = claimed.iterator(); lapsed.hasNext(); ) {
            Due next = lapsed.next();
            if (next.at().isAfter(now)) {
                break;
            }
            lapsed.remove();
            AuthorizationRecord authorization = authorizations.get(next.id());
            if (authorization != null && authorization.state() == AuthorizationState.APPROVED) {
                unclaimed.add(new Due(authorization.expiresAt(), next.id()));
            }
        }
        List<AuthorizationRecord> taken = new ArrayList<>();
        for (Iterator<Due> head = unclaimed.iterator(); taken.size() < limit && head.hasNext(); ) {
            Due next = head.next();
            if (next.at().isAfter(now)) {
                break;
            }
            head.remove();
            AuthorizationRecord authorization = authorizations.get(next.id());
            if (authorization != null && authorization.state() == AuthorizationState.APPROVED) {
                taken.add(authorization);
                claimed.add(new Due(now.plus(lease), next.id()));
            }
        }
        return taken;
    }

    @Override
    public Optional<OperationRecord> findOperation(String id) {
        return Optional.ofNullable(operations.get(id));
    }

    private StoreFullException full() {
        return new StoreFullException("the in-memory resource store holds authorization.in-memory.max-resources ("
                                      + maxResources + ") authorizations, captures and voids");
    }

    /**
     * Resources held: authorizations, captures and voids (the expiry worker's included).
     *
     * @return count
     */
    public int size() {
        return size.get();
    }

    // An authorization's expiresAt, or the end of the expiry worker's claim on it.
    private record Due(Instant at, String id) {
        static final Comparator<Due> ORDER = Comparator.comparing(Due::at).thenComparing(Due::id);
    }
}
