package com.example.payments.authorization;

import java.time.Instant;

/**
 * The state machine of an authorization, written once and used by every resource store: what a capture, a void or
 * the expiry may do to an authorization as it stands (the <em>reserve</em> step), and what each outcome makes of it
 * (the <em>settle</em> step). Pure functions of a {@link Position}: stores apply the verdict in one conditional write,
 * so the check and the reservation are one step however many replicas race. The in-memory store calls these under
 * its lock; PostgreSQL states the same conditions in the {@code WHERE} of one {@code UPDATE}
 * ({@code database.PostgresOperations}) and asks {@link #reserve} only to name a refusal. A change here is a change
 * there too: the capture API and store contract suites run on both stores.
 *
 * <p>A capture reserves its amount (state {@code APPROVED}, not expired, no void pending, the capturable remainder
 * covers it, in the authorization's currency), a void reserves the whole remainder (state {@code APPROVED}, no capture
 * pending). While a capture is pending a void is refused, and the other way round. A success applies the reservation,
 * a decline returns it; an outcome left unknown keeps it until the retry (with the same attempt id) settles it.
 *
 * <p>Refusals and their status codes: 409 when the state does not allow the operation (declined, voided, expired,
 * reversed, fully captured, a conflicting operation pending, {@code authorization.max-captures} reached), 422 when
 * the request does not fit the authorization (another currency, an amount above the capturable remainder).
 */
public final class Lifecycle {

    private Lifecycle() {
    }

    /** What is asked of an authorization. */
    public enum Operation {
        /** A capture of part or all of the remainder ({@code POST .../captures}). */
        CAPTURE,
        /** A void of the whole remainder ({@code POST .../voids}). */
        VOID,
        /** The expiry worker releasing the remainder after {@code authorization.validity}. */
        EXPIRE
    }

    /**
     * Where an authorization stands, as far as the lifecycle is concerned.
     *
     * @param state      its state
     * @param amount     authorized minor units
     * @param currency   its currency
     * @param captured   minor units captured (succeeded captures)
     * @param reserved   minor units reserved by pending captures (a pending void reserves the remainder by its flag)
     * @param voidPending a void (or the expiry's void) is pending
     * @param captures   captures made or pending so far
     * @param expiresAt  when the remainder stops being capturable
     */
    public record Position(AuthorizationState state, long amount, String currency, long captured, long reserved,
                           boolean voidPending, int captures, Instant expiresAt) {

        /**
         * Minor units still free to capture or void.
         *
         * @return amount - captured - reserved
         */
        public long remainder() {
            return amount - captured - reserved;
        }
    }

    /** The verdict of a reserve step. */
    public sealed interface Verdict {
    }

    /**
     * Allowed: reserve this much.
     *
     * @param amount minor units the operation reserves
     */
    public record Allowed(long amount) implements Verdict {
    }

    /**
     * Refused; nothing is reserved.
     *
     * @param status  409 or 422
     * @param type    problem type, e.g. {@code not-capturable}
     * @param pointer JSON pointer of the field at fault (422), or {@code null}
     * @param detail  what is wrong, naming the state
     */
    public record Refused(int status, String type, String pointer, String detail) implements Verdict {
    }

    /**
     * The reserve step.
     *
     * @param at          the authorization
     * @param operation   what is asked
     * @param amount      minor units asked (captures; ignored otherwise)
     * @param currency    currency asked (captures; ignored otherwise)
     * @param maxCaptures {@code authorization.max-captures}
     * @param now         the time of the request
     * @return what the operation may reserve, or why not
     */
    public static Verdict reserve(Position at, Operation operation, long amount, String currency, int maxCaptures,
                                  Instant now) {
        if (at.state() != AuthorizationState.APPROVED) {
            return conflict("The authorization is " + at.state() + ".");
        }
        boolean expired = !now.isBefore(at.expiresAt());
        return switch (operation) {
        case CAPTURE -> {
            if (expired) {
                yield conflict("The authorization is EXPIRED.");
            }
            if (at.voidPending()) {
                yield conflict("A void of the authorization is pending.");
            }
            if (at.captures() >= maxCaptures) {
                yield conflict("The authorization has " + at.captures() + " captures, the most allowed.");
            }
            if (!at.currency().equals(currency)) {
                yield new Refused(422, "capture-not-allowed", "#/amount/currency", "The authorization is in "
                                  + at.currency() + ".");
            }
            if (amount > at.remainder()) {
                yield new Refused(422, "capture-not-allowed", "#/amount/value", "The capturable remainder is "
                                  + at.remainder() + ".");
            }
            yield new Allowed(amount);
        }
        case VOID -> {
            if (expired) {
                yield conflict("The authorization is EXPIRED.");
            }
            yield at.voidPending() || at.reserved() > 0
                    ? conflict("A " + (at.voidPending() ? "void" : "capture") + " of the authorization is pending.")
                    : new Allowed(at.remainder());
        }
        case EXPIRE -> !expired ? conflict("The authorization has not expired.")
                : at.voidPending() || at.reserved() > 0 ? conflict("An operation on the authorization is pending.")
                : new Allowed(at.remainder());
        };
    }

    /**
     * The settle step of a reserved operation.
     *
     * @param at        the authorization, with the reservation
     * @param operation the operation reserved
     * @param amount    what it reserved
     * @param succeeded {@code true} when the acquirer applied it, {@code false} when it declined (an expiry ends
     *                  in {@code EXPIRED} either way)
     * @return the authorization after it
     */
    public static Position settle(Position at, Operation operation, long amount, boolean succeeded) {
        return switch (operation) {
        case CAPTURE -> {
            long captured = at.captured() + (succeeded ? amount : 0);
            AuthorizationState state = captured == at.amount() ? AuthorizationState.CAPTURED : at.state();
            yield new Position(state, at.amount(), at.currency(), captured, at.reserved() - amount, at.voidPending(),
                               at.captures(), at.expiresAt());
        }
        case VOID -> new Position(succeeded ? AuthorizationState.VOIDED : at.state(), at.amount(), at.currency(),
                at.captured(), at.reserved(), false, at.captures(), at.expiresAt());
        // Past its validity nothing is capturable here, whatever the acquirer answered the void.
        case EXPIRE -> new Position(AuthorizationState.EXPIRED, at.amount(), at.currency(), at.captured(),
                at.reserved(), false, at.captures(), at.expiresAt());
        };
    }

    private static Refused conflict(String detail) {
        return new Refused(409, "not-capturable", null, detail);
    }
}
