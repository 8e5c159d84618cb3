package com.example.payments.idempotency;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * Fingerprints, attempt ids and resource ids: keyed hashes, stable for one request on every replica, different for
 * another request, another merchant, operation or key, and never the input.
 */
class RequestIdentitiesTest {

    private static final String CANONICAL = "merchantId=m_123\ncard.number=4111111111111111\namount.value=1299\n";
    private static final RequestIdentities IDS = RequestIdentities.create("a-secret-of-16-chars", Optional.empty());
    private static final IdempotencyKey KEY = new IdempotencyKey("order-42");

    private static Identity identity(RequestIdentities ids, String operation, String scope, IdempotencyKey key,
                                     String canonical) {
        return ids.of(operation, "authorization", scope, key, canonical).getFirst();
    }

    private static Identity identity() {
        return identity(IDS, "authorize", "m_123", KEY, CANONICAL);
    }

    @Test
    void everyRetryOfOneRequestGetsTheSameFingerprintAttemptIdAndResourceIdOnEveryReplica() {
        RequestIdentities otherReplica = RequestIdentities.create("a-secret-of-16-chars", Optional.empty());
        assertThat(identity(otherReplica, "authorize", "m_123", new IdempotencyKey("order-42"), CANONICAL),
                   is(identity()));
        assertThat(identity().fingerprint().length(), is(64));
        assertThat(identity().attemptId().matches("att_[0-9a-f]{32}"), is(true));
    }

    @Test
    void noPartOfTheRequestAppearsInItsIdentity() {
        assertThat(identity().toString(), not(containsString("4111")));
        assertThat(identity().toString(), not(containsString("order-42")));
    }

    @Test
    void anotherRequestUnderTheSameKeyGetsAnotherAttemptId() {
        String otherCard = CANONICAL.replace("4111111111111111", "5555555555554444");
        Identity other = identity(IDS, "authorize", "m_123", KEY, otherCard);
        assertThat(other.fingerprint(), not(identity().fingerprint()));
        assertThat(other.attemptId(), not(identity().attemptId()));
        assertThat(other.decision(), not(identity().decision()));
    }

    @Test
    void anotherMerchantOperationOrKeyGetsAnotherAttemptId() {
        String id = identity().attemptId();
        assertThat(identity(IDS, "authorize", "m_124", KEY, CANONICAL).attemptId(), not(id));
        assertThat(identity(IDS, "capture", "m_123", KEY, CANONICAL).attemptId(), not(id));
        assertThat(identity(IDS, "authorize", "m_123", new IdempotencyKey("order-43"), CANONICAL).attemptId(), not(id));
    }

    @Test
    void partsAreLengthPrefixedSoAColonInAnIdentityCannotForgeAnotherKey() {
        // "m:1" + "x" and "m" + "1:x" would be the same text joined with ':'.
        assertThat(RequestIdentities.lookupKey("authorize", "m:1", new IdempotencyKey("x")),
                   not(RequestIdentities.lookupKey("authorize", "m", new IdempotencyKey("1:x"))));
        assertThat(identity(IDS, "authorize", "m:1", new IdempotencyKey("x"), CANONICAL).attemptId(),
                   not(identity(IDS, "authorize", "m", new IdempotencyKey("1:x"), CANONICAL).attemptId()));
        assertThat(RequestIdentities.lookupKey("authorize", "m_123", KEY), is("9:authorize:5:m_123:8:order-42"));
    }

    @Test
    void theResourceIdIsAVersion8UuidWith122BitsOfTheHash() {
        UUID id = UUID.fromString(identity().decision().id());
        assertThat(id.version(), is(8));
        assertThat(id.variant(), is(2));
        assertThat(identity().decision().kind(), is("authorization"));
    }

    @Test
    void anotherSecretGivesOtherIdentities() {
        Identity other = identity(RequestIdentities.create("another-secret-16ch", Optional.empty()), "authorize",
                                  "m_123", KEY, CANONICAL);
        assertThat(other.fingerprint(), not(identity().fingerprint()));
        assertThat(other.attemptId(), not(identity().attemptId()));
        assertThat(other.decision(), not(identity().decision()));
    }

    @Test
    void duringARotationTheCurrentIdentityComesFirstAndThePreviousSecondAsBefore() {
        RequestIdentities rotating = RequestIdentities.create("the-new-secret-16ch", Optional.of("a-secret-of-16-chars"));
        List<Identity> both = rotating.of("authorize", "authorization", "m_123", KEY, CANONICAL);
        assertThat(both, hasSize(2));
        assertThat(both.get(1), is(identity()));
        assertThat(both.get(0), not(identity()));
    }
}
