package com.example.payments.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

/**
 * How this service configures Lettuce: fail fast and closed, reconnect by itself.
 */
final class RedisClients {

    /** Longest pause between two reconnection attempts. */
    static final Duration RECONNECT_INTERVAL = Duration.ofSeconds(1);

    private RedisClients() {
    }

    /**
     * Lettuce's threads and timers: reconnect attempts 50 ms to 1 s apart, no latency recording (nothing reads it).
     *
     * @return resources, shut down by {@link RedisConnection#close()}
     */
    static ClientResources resources() {
        return ClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(50), RECONNECT_INTERVAL, 2, TimeUnit.MILLISECONDS))
                .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                .build();
    }

    /**
     * The URI: {@code rediss://} turns TLS on (peer verified against the JVM's trust store), {@code user:password@}
     * authenticates with an ACL user.
     *
     * @param settings {@code idempotency.redis.*}
     * @return the URI
     */
    static RedisURI uri(RedisSettings settings) {
        RedisURI uri = RedisURI.create(settings.uri());
        // Lettuce bounds the connection handshake (HELLO, AUTH) by this: the connect timeout, not the command
        // timeout, or a cold JVM's first connection times out. Commands get the command timeout (options below).
        uri.setTimeout(settings.connectTimeout().compareTo(settings.commandTimeout()) >= 0 ? settings.connectTimeout()
                : settings.commandTimeout());
        return uri;
    }

    /**
     * The client.
     *
     * @param settings  {@code idempotency.redis.*}
     * @param resources from {@link #resources()}
     * @param uri       from {@link #uri(RedisSettings)}
     * @return a client that has not connected yet
     */
    static RedisClient client(RedisSettings settings, ClientResources resources, RedisURI uri) {
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                                  .autoReconnect(true)
                                  // While disconnected, refuse at once (503) instead of queueing until the timeout.
                                  .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                                  // At most once: a claim re-sent after a reconnect could answer 409 to its own request.
                                  .replayFilter(command -> true)
                                  .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
                                  .socketOptions(SocketOptions.builder()
                                                         .connectTimeout(settings.connectTimeout())
                                                         .keepAlive(true)
                                                         .build())
                                  .build());
        return client;
    }
}
