package com.example.payments.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

/**
 * A Lua script run atomically by Redis with {@code EVALSHA}. Redis forgets loaded scripts when it restarts or fails
 * over, so the caller loads it again after a {@code NOSCRIPT} reply ({@link RedisConnection}).
 *
 * @param name   name for error messages, e.g. {@code claim}
 * @param source the Lua source
 * @param output how Redis's reply is decoded
 * @param sha1   SHA-1 of the source in lower-case hex, the digest {@code EVALSHA} names the script by
 */
record LuaScript(String name, String source, ScriptOutputType output, String sha1) {

    /**
     * Creates a script.
     *
     * @param name   name for error messages
     * @param source Lua source
     * @param output reply type
     * @return the script
     */
    static LuaScript of(String name, String source, ScriptOutputType output) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
            return new LuaScript(name, source, output, HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JDK", e);
        }
    }

    /**
     * Runs the script with {@code EVALSHA}; after {@code NOSCRIPT} loads it with {@code SCRIPT LOAD} and runs it again.
     *
     * @param redis    the connection to run it on
     * @param keys     its keys
     * @param args     its arguments
     * @param deadline {@link System#nanoTime()} by which all of it must have answered
     * @return the reply, decoded as {@link #output()}
     * @throws io.lettuce.core.RedisException when Redis fails, refuses or does not answer by the deadline
     */
    Object run(RedisAsyncCommands<String, byte[]> redis, String[] keys, byte[][] args, long deadline) {
        try {
            return RedisReplies.await(redis.evalsha(sha1, output, keys, args), deadline);
        } catch (RedisNoScriptException e) {
            RedisReplies.await(redis.scriptLoad(source), deadline);
            return RedisReplies.await(redis.evalsha(sha1, output, keys, args), deadline);
        }
    }
}
