package com.example.payments.idempotency;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import com.example.payments.http.Json;
import com.fasterxml.jackson.databind.JsonNode;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/** Reads everything a test's Redis holds under a key prefix, to prove what is (not) stored there. */
final class RedisScan {

    private RedisScan() {
    }

    /**
     * Every key under the prefix, every hash field name and value, every string value, as text.
     *
     * @param uri    the test's own Redis
     * @param prefix key prefix
     * @return all of it
     */
    static List<String> valuesUnder(String uri, String prefix) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            List<String> values = new ArrayList<>();
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
                for (String key : page.getKeys()) {
                    values.add(key);
                    switch (redis.type(key)) {
                    case "hash" -> redis.hgetall(key).forEach((field, value) -> {
                        values.add(field);
                        values.add(value);
                    });
                    case "string" -> values.add(redis.get(key));
                    // The merchant quota sets: record keys as members.
                    case "zset" -> values.addAll(redis.zrange(key, 0, -1));
                    default -> throw new AssertionError("Unexpected type of " + key + ": " + redis.type(key));
                    }
                }
                cursor = page;
            } while (!cursor.isFinished());
            return values;
        } finally {
            client.shutdown();
        }
    }

    /**
     * Whether a stored value is, or is JSON holding anywhere, exactly this text or number.
     *
     * @param value  stored value
     * @param needle e.g. a CVC
     * @return {@code true} when found
     */
    static boolean hasJsonValue(String value, String needle) {
        if (value.equals(needle)) {
            return true;
        }
        if (!value.startsWith("{")) {
            return false;
        }
        try {
            return contains(Json.mapper().readTree(value), needle);
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean contains(JsonNode node, String needle) {
        if (node.isValueNode()) {
            return node.asText().equals(needle);
        }
        for (JsonNode child : node) {
            if (contains(child, needle)) {
                return true;
            }
        }
        return false;
    }
}
