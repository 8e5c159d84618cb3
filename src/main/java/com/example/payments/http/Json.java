package com.example.payments.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The one Jackson {@link ObjectMapper} of the service, shared by the Helidon Jackson media support and by the code
 * that serializes responses to bytes (an idempotent replay must be byte-identical, so bodies are serialized once and
 * stored as bytes).
 */
public final class Json {

    // Strict parsing: trailing content and duplicate keys are errors, so that this service and every proxy, WAF or
    // log pipeline in front of it read the same request (with duplicates, each parser may keep a different value).
    // Buffers from one shared pool: Jackson's default pool is per thread, and every request runs on a virtual thread
    // of its own, so each parse and each serialization would allocate fresh buffers.
    private static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                                                                          .recyclerPool(JsonRecyclerPools
                                                                                  .sharedConcurrentDequePool())
                                                                          .build())
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            // A parser error must never carry the body it was reading (it could hold a card number or a CVC).
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .build();

    private Json() {
    }

    /**
     * The shared mapper. Thread-safe; do not reconfigure it.
     *
     * @return mapper
     */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * Serializes a value to UTF-8 JSON bytes.
     *
     * @param value a record or map
     * @return the bytes
     * @throws IllegalStateException if the value cannot be serialized (a bug, never a client error)
     */
    public static byte[] bytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("Cannot serialize " + value.getClass().getName(), e);
        }
    }
}
