package com.example.payments.database;

import java.time.Instant;
import java.util.UUID;

/**
 * One row of the {@code authorizations} table, the system of record: written in the transaction that records its
 * decision, never with a card number or CVC.
 *
 * @param id          the authorization id (UUID version 8 derived from the attempt id)
 * @param merchant    merchant id
 * @param reference   merchant reference, or {@code null}
 * @param amount      minor units, > 0
 * @param currency    ISO 4217 code
 * @param brand       card brand, e.g. {@code visa}
 * @param lastFour    last four digits of the PAN
 * @param status      {@code APPROVED} or {@code DECLINED}
 * @param declineCode why it was declined, or {@code null}
 * @param createdAt   when it was decided
 */
public record AuthorizationRow(UUID id, String merchant, String reference, long amount, String currency, String brand,
                               String lastFour, String status, String declineCode, Instant createdAt) {
}
