package com.example.payments.idempotency;

/**
 * The result of {@link IdempotencyStore#recordAndComplete}.
 *
 * @param winner    the decision recorded for the attempt: this caller's, or the one another execution of the same
 *                  attempt recorded first (then this caller answers that one)
 * @param inserted  {@code true} when this caller's decision was the first recorded
 * @param completed {@code true} when the key now replays the winner; {@code false} when the key was refused (another
 *                  claim holds it, or the completion failed): the decision is recorded all the same, and the next
 *                  claim of the key recovers it
 */
public record Recorded(Decision winner, boolean inserted, boolean completed) {
}
