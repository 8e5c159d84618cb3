package com.example.payments.idempotency;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

/**
 * The canonical form behind the fingerprint: the states of an optional field never share a form.
 */
class CanonicalFormTest {

    @Test
    void absentNullEmptyAndAValueOfAnOptionalFieldAreFourDifferentForms() {
        List<String> forms = List.of(
                CanonicalForm.builder().optional("reference", false, null).build(),
                CanonicalForm.builder().optional("reference", true, null).build(),
                CanonicalForm.builder().optional("reference", true, "").build(),
                CanonicalForm.builder().optional("reference", true, "null").build(),
                CanonicalForm.builder().optional("reference", true, "!empty").build(),
                CanonicalForm.builder().optional("reference", true, "\"\"").build());
        Set<String> distinct = new HashSet<>(forms);
        assertThat(forms.toString(), distinct.size(), is(forms.size()));
    }

    @Test
    void anAbsentFieldAndARequiredOneAreWrittenAsBeforeSoRecordedFingerprintsStillMatch() {
        String form = CanonicalForm.builder().field("merchantId", "m_123").optional("reference", false, null)
                .field("amount.value", 1299L).optional("note", true, "order-42").build();
        assertThat(form, is("merchantId=m_123\nreference=\namount.value=1299\nnote=order-42\n"));
    }

    @Test
    void theFormIsNeverPrintedWhereItCouldLeakCardData() {
        CanonicalForm form = CanonicalForm.builder().field("card.number", "4111111111111111");
        assertThat(form.toString().contains("4111"), is(false));
        assertThat(form.build(), not(is("")));
    }
}
