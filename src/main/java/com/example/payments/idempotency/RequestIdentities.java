package com.example.payments.idempotency;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What a request is, for idempotency, computed with the fingerprint secret ({@code idempotency.fingerprint-secret}):
 * <ul>
 *     <li><b>fingerprint</b> = HMAC-SHA256(secret, canonical form of the validated request). Keyed, not a plain hash,
 *     because the canonical form contains the PAN: a plain SHA-256 of a 16-digit PAN with a known BIN is brute-forced
 *     in seconds, an HMAC without the secret is not.</li>
 *     <li><b>attempt id</b> = {@code att_} + the first 128 bits, in hex, of HMAC-SHA256(attempt key, operation,
 *     merchant, idempotency key, fingerprint), each part length-prefixed so that no two different requests encode
 *     alike (a merchant identity may contain {@code :}). The same for every retry of one request on every replica;
 *     another request under the same key (after a 502 released it) gets another one. The issuer deduplicates on it.</li>
 *     <li><b>resource id</b> = a version 8 UUID made of 122 bits of HMAC-SHA256(id key, kind, attempt id): unguessable,
 *     and the same for every execution of one attempt, so two executions record one decision.</li>
 * </ul>
 * The attempt key and the id key are derived from the secret (HMAC of a fixed label, {@link StableNames}: the same
 * after a rename), so one secret serves all three.
 *
 * <p>Rotation: with {@code idempotency.fingerprint-secret-previous} set, each request also gets its identity under the
 * previous secret, and a key recorded before the rotation still matches, replays and recovers with the attempt id it
 * was first sent with.
 */
public final class RequestIdentities {

    private static final String HMAC = "HmacSHA256";

    private final List<Keys> secrets;

    private record Keys(Hmac fingerprint, Hmac attempt, Hmac id) {
    }

    /**
     * One HMAC key with a {@link Mac} initialised once: each use takes a clone of it, which copies the key schedule
     * instead of looking the algorithm up and initialising it again. Not a per-thread cache: every request runs on a
     * virtual thread of its own.
     */
    private static final class Hmac {

        private final SecretKeySpec key;
        private final Mac prototype;

        private Hmac(SecretKeySpec key) {
            this.key = key;
            this.prototype = initialised(key);
        }

        byte[] of(byte[] input) {
            Mac mac;
            try {
                mac = (Mac) prototype.clone();
            } catch (CloneNotSupportedException e) {
                // A provider whose Mac cannot be cloned: initialise one per use.
                mac = initialised(key);
            }
            return mac.doFinal(input);
        }

        private static Mac initialised(SecretKeySpec key) {
            try {
                Mac mac = Mac.getInstance(HMAC);
                mac.init(key);
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("HmacSHA256 is required of every JDK", e);
            }
        }
    }

    private RequestIdentities(List<Keys> secrets) {
        this.secrets = secrets;
    }

    /**
     * Creates the identities of a secret and, during a rotation, of the previous one.
     *
     * @param secret   {@code idempotency.fingerprint-secret}, at least 16 characters (UTF-8)
     * @param previous {@code idempotency.fingerprint-secret-previous}, present only during a rotation
     * @return the calculator
     */
    public static RequestIdentities create(String secret, Optional<String> previous) {
        List<Keys> keys = new ArrayList<>();
        keys.add(keys(secret));
        previous.ifPresent(p -> keys.add(keys(p)));
        return new RequestIdentities(List.copyOf(keys));
    }

    /**
     * The key an idempotency key is stored under: operation, merchant and idempotency key, each written as
     * {@code <length>:<value>} and joined with {@code :}, e.g. {@code 9:authorize:5:m_123:8:order-42}. Unambiguous
     * whatever characters the parts contain.
     *
     * @param operation operation name, e.g. {@code authorize}
     * @param scope     the merchant the caller acts for
     * @param key       the idempotency key
     * @return the lookup key
     */
    public static String lookupKey(String operation, String scope, IdempotencyKey key) {
        return part(operation) + ':' + part(scope) + ':' + part(key.value());
    }

    /**
     * The scope a lookup key was built with: the inverse of {@link #lookupKey} for its second part. Stores keep
     * per-scope quota counts with it.
     *
     * @param lookupKey a key built by {@link #lookupKey}
     * @return the scope, e.g. {@code m_123}
     * @throws IllegalArgumentException when the key was not built by {@link #lookupKey}
     */
    public static String scopeOf(String lookupKey) {
        int afterOperation = skipPart(lookupKey, 0);
        int colon = lookupKey.indexOf(':', afterOperation);
        try {
            int length = Integer.parseInt(lookupKey.substring(afterOperation, colon));
            return lookupKey.substring(colon + 1, colon + 1 + length);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a lookup key built by RequestIdentities.lookupKey", e);
        }
    }

    /**
     * The request's identities, current secret first.
     *
     * @param operation     operation name, e.g. {@code authorize}
     * @param kind          kind of the resource the operation creates, e.g. {@code authorization}
     * @param scope         the merchant the caller acts for
     * @param key           the idempotency key
     * @param canonicalForm the validated request in canonical form (may contain the PAN: it only enters HMACs)
     * @return one identity, or two during a rotation
     */
    public List<Identity> of(String operation, String kind, String scope, IdempotencyKey key, String canonicalForm) {
        List<Identity> identities = new ArrayList<>(secrets.size());
        for (Keys keys : secrets) {
            String fingerprint = HexFormat.of().formatHex(keys.fingerprint().of(bytes(canonicalForm)));
            byte[] attempt = keys.attempt().of(lengthPrefixed(operation, scope, key.value(), fingerprint));
            String attemptId = "att_" + HexFormat.of().formatHex(attempt, 0, 16);
            String id = uuidV8(keys.id().of(lengthPrefixed(kind, attemptId))).toString();
            identities.add(new Identity(fingerprint, attemptId, new DecisionKey(kind, id)));
        }
        return List.copyOf(identities);
    }

    private static Keys keys(String secret) {
        Hmac master = new Hmac(new SecretKeySpec(bytes(secret), HMAC));
        return new Keys(master, derived(master, StableNames.ATTEMPT_ID_LABEL),
                        derived(master, StableNames.RESOURCE_ID_LABEL));
    }

    private static Hmac derived(Hmac master, String label) {
        return new Hmac(new SecretKeySpec(master.of(bytes(label)), HMAC));
    }

    // RFC 9562 section 5.8: the custom bits are the hash; version 8 and the variant take 6 of its 128 bits.
    private static UUID uuidV8(byte[] hash) {
        ByteBuffer buffer = ByteBuffer.wrap(hash, 0, 16);
        long high = (buffer.getLong() & ~0xF000L) | 0x8000L;
        long low = (buffer.getLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(high, low);
    }

    private static byte[] lengthPrefixed(String... parts) {
        int size = 0;
        byte[][] encoded = new byte[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            encoded[i] = bytes(parts[i]);
            size += 4 + encoded[i].length;
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (byte[] part : encoded) {
            buffer.putInt(part.length).put(part);
        }
        return buffer.array();
    }

    private static String part(String value) {
        return value.length() + ":" + value;
    }

    // Where the part after the one starting at `from` starts (past its trailing ':').
    private static int skipPart(String lookupKey, int from) {
        int colon = lookupKey.indexOf(':', from);
        try {
            int end = colon + 1 + Integer.parseInt(lookupKey.substring(from, colon));
            if (end >= lookupKey.length() || lookupKey.charAt(end) != ':') {
                throw new IllegalArgumentException("not a lookup key built by RequestIdentities.lookupKey");
            }
            return end + 1;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a lookup key built by RequestIdentities.lookupKey", e);
        }
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
