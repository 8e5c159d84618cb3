package com.example.payments;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

import io.helidon.config.Config;
import io.helidon.webserver.WebServerConfig;

/**
 * Checks the two listener config nodes ({@code server}, {@code health-server}), which Helidon reads itself, before
 * anything starts: a malformed value there fails startup with one line naming the key (exit 2), as for every key of
 * ours, instead of a stack trace (exit 1) or a silent default.
 */
final class ListenerConfigs {

    private static final List<String> NODES = List.of("server", "health-server");
    // Helidon settings of a listener that hold a duration or an integer, read with this service's rules first (one
    // value, whole milliseconds, a year at most) so their mistakes read like every other key's.
    private static final List<String> DURATIONS = List.of("shutdown-grace-period", "connection-options.read-timeout",
                                                          "connection-options.connect-timeout");
    private static final List<String> INTEGERS = List.of("max-payload-size", "max-concurrent-requests",
                                                         "max-in-memory-entity", "backlog", "write-queue-length",
                                                         "write-buffer-size", "receive-buffer-size");

    private ListenerConfigs() {
    }

    /**
     * Checks both listener nodes: each an object, no empty value anywhere under it, one value where one is expected, a
     * port from 0 to 65535, a host that resolves, and every value readable as the type Helidon expects (numbers,
     * ISO-8601 durations, ...).
     *
     * @param config the whole configuration
     * @throws ConfigurationException naming the first key that is wrong
     */
    static void check(Config config) {
        for (String name : NODES) {
            Config node = config.get(name);
            if (!node.exists()) {
                continue;
            }
            if (node.type() != Config.Type.OBJECT) {
                throw new ConfigurationException(name, "a " + (node.type() == Config.Type.LIST ? "list" : "value")
                                                       + " where an object is expected; allowed: an object with keys "
                                                       + "such as port and host");
            }
            noEmptyValues(node);
            ConfigValues values = ConfigValues.create(config);
            DURATIONS.forEach(key -> values.nonNegativeDuration(name + "." + key, Duration.ZERO));
            INTEGERS.forEach(key -> values.longInRange(name + "." + key, 0, -1, Integer.MAX_VALUE));
            values.longInRange(name + ".port", 0, 0, 65535);
            values.string(name + ".host", "an address of this machine, e.g. 0.0.0.0 (every interface) or 127.0.0.1")
                    .ifPresent(host -> resolvable(name + ".host", host));
            try {
                WebServerConfig.builder().config(node);
            } catch (io.helidon.common.config.ConfigException e) {
                throw ConfigurationException.from(e).<RuntimeException>map(named -> named).orElse(e);
            }
        }
    }

    private static void noEmptyValues(Config node) {
        switch (node.type()) {
        case OBJECT, LIST -> node.asNodeList().orElse(List.of()).forEach(ListenerConfigs::noEmptyValues);
        case VALUE -> {
            if (node.asString().orElse("").isBlank()) {
                throw new ConfigurationException(node.key().toString(), "empty; allowed: a value, or no key at all "
                                                                        + "for Helidon's default");
            }
        }
        default -> {
        }
        }
    }

    private static void resolvable(String key, String host) {
        try {
            InetAddress.getByName(host.trim());
        } catch (UnknownHostException | SecurityException e) {
            throw new ConfigurationException(key, "'" + host + "' is neither an IP address nor a host name this "
                                                  + "machine resolves; allowed: an address of this machine, e.g. "
                                                  + "0.0.0.0 (every interface) or 127.0.0.1");
        }
    }
}
