package com.example.payments;

import java.util.Map;

/** The capture and void suite on the in-memory resource store. */
class InMemoryCaptureApiTest extends CaptureApiContract {

    @Override
    Map<String, String> backend() {
        return Map.of();
    }
}
