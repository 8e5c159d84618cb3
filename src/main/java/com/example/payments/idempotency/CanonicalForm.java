package com.example.payments.idempotency;

/**
 * Builds the canonical form of a validated request, the text its idempotency fingerprint is computed over
 * ({@link RequestIdentities}): one field per line in a fixed order, so that whitespace and field order of the submitted
 * JSON do not matter, while two requests that mean different things never share a form.
 *
 * <p>Lines: a required field {@code name=value}. An optional field has three states a client can send, told apart
 * because they are different requests (IETF draft-ietf-httpapi-idempotency-key-header: a key reused with another
 * payload is {@code 422}):
 * <ul>
 *     <li>absent: {@code name=} (the line every version wrote for it, so fingerprints recorded earlier still
 *     match);</li>
 *     <li>JSON {@code null}: {@code name!null};</li>
 *     <li>a value: {@code name=value}, and the empty string {@code name!empty} (which earlier versions wrote as
 *     {@code name=}, the same line as an absent field).</li>
 * </ul>
 * Values must not contain a line break (callers validate them first: control characters are refused), so no value
 * can forge another line; a {@code !} line cannot be forged by any value since values follow {@code =}.
 */
public final class CanonicalForm {

    private final StringBuilder text = new StringBuilder(256);

    private CanonicalForm() {
    }

    /**
     * Starts an empty form.
     *
     * @return the builder
     */
    public static CanonicalForm builder() {
        return new CanonicalForm();
    }

    /**
     * Adds a required field.
     *
     * @param name  the field's name, e.g. {@code amount.value}
     * @param value its validated value, written with {@link String#valueOf(Object)}
     * @return this builder
     */
    public CanonicalForm field(String name, Object value) {
        text.append(name).append('=').append(value).append('\n');
        return this;
    }

    /**
     * Adds an optional field.
     *
     * @param name  the field's name, e.g. {@code reference}
     * @param sent  whether the request had the field at all ({@code false}: absent)
     * @param value its value, {@code null} when sent as JSON {@code null}
     * @return this builder
     */
    public CanonicalForm optional(String name, boolean sent, String value) {
        if (!sent) {
            text.append(name).append("=\n");
        } else if (value == null) {
            text.append(name).append("!null\n");
        } else if (value.isEmpty()) {
            text.append(name).append("!empty\n");
        } else {
            text.append(name).append('=').append(value).append('\n');
        }
        return this;
    }

    /**
     * The form.
     *
     * @return the canonical text; may hold card data, so it is only ever fed into an HMAC, never logged or stored
     */
    public String build() {
        return text.toString();
    }

    @Override
    public String toString() {
        return "CanonicalForm[" + text.length() + " chars]";
    }
}
