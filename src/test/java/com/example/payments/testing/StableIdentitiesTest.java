package com.example.payments.testing;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

/** The ids and key prefix deployed services depend on are the ones every build so far derived (RenameIT too). */
class StableIdentitiesTest {

    @Test
    void theIdsAndTheKeyPrefixAreThoseEveryBuildDerived() throws Exception {
        List<String> identities = StableIdentities.of(StableIdentitiesTest.class.getClassLoader(),
                                                      "com.example.payments", "rename-it-fixed-fingerprint-secret");

        assertThat(identities.subList(0, 2), is(List.of("att_6878a0043d3e79cf042f12c48158e198",
                                                        "2fc9aaef-f899-8073-90cd-196dcf0f5103")));
        assertThat(identities.get(2), is("payments" + "-authorization:"));
        assertThat(identities.get(3), is(identities.get(2)));
    }
}
