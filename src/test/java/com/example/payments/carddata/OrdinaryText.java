package com.example.payments.carddata;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.function.Function;

/**
 * Realistic text that holds numbers but no card number, made deterministically from a seed: the strings a log line or
 * a free-text field is full of (timestamps, instants, addresses and ports, IPv4 and IPv6, amounts, order and invoice
 * numbers, UUIDs, phone numbers, dates, versions). Written with every separator the detector accepts between digit
 * groups, so that it shows what those separators would cost on ordinary text.
 */
final class OrdinaryText {

    /** One kind of text and how to make one. */
    record Kind(String name, Function<Random, String> make) {
    }

    private static final String[] LEVELS = {"INFO", "WARNING", "FINE", "SEVERE"};
    private static final String[] CURRENCIES = {"EUR", "USD", "GBP", "CHF", "JPY", "SEK"};
    private static final String[] MONTHS = {"January", "February", "March", "April", "May", "June", "July", "August",
            "September", "October", "November", "December"};
    // Separators of amounts and dates in the locales a merchant writes them in: no-break and narrow no-break spaces
    // group thousands in French and German text, thin spaces in ISO 31-0.
    private static final String[] THOUSANDS = {",", ".", "\u00A0", "\u202F", "\u2009", " ", "'", "_"};

    private OrdinaryText() {
    }

    /**
     * The kinds, each making strings of its own shape.
     *
     * @return the kinds, in a fixed order
     */
    static List<Kind> kinds() {
        return List.of(
                new Kind("log line", OrdinaryText::logLine),
                new Kind("ISO instant", OrdinaryText::instant),
                new Kind("address with port", OrdinaryText::addressWithPort),
                new Kind("IPv4 or IPv6", OrdinaryText::ipAddresses),
                new Kind("list of amounts", OrdinaryText::amounts),
                new Kind("order or invoice number", OrdinaryText::orderNumber),
                new Kind("UUID", OrdinaryText::uuids),
                new Kind("phone number", OrdinaryText::phoneNumber),
                new Kind("date", OrdinaryText::dates),
                new Kind("version", OrdinaryText::version),
                new Kind("counts and sizes", OrdinaryText::counts));
    }

    /**
     * {@code count} strings, the kinds taking turns.
     *
     * @param seed  the seed of the one {@link Random} behind them
     * @param count how many
     * @return the strings, the same for the same seed
     */
    static List<String> strings(long seed, int count) {
        Random random = new Random(seed);
        List<Kind> kinds = kinds();
        List<String> strings = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            strings.add(kinds.get(i % kinds.size()).make().apply(random));
        }
        return strings;
    }

    private static String logLine(Random r) {
        String timestamp = switch (r.nextInt(4)) {
        case 0 -> String.format(Locale.ROOT, "%s.%03d", isoLocal(r), r.nextInt(1000));
        case 1 -> String.format(Locale.ROOT, "%s,%03d", isoLocal(r).replace('T', ' '), r.nextInt(1000));
        case 2 -> String.format(Locale.ROOT, "%02d/%02d/%04d %02d:%02d:%02d.%03d", 1 + r.nextInt(28),
                                1 + r.nextInt(12), 2020 + r.nextInt(10), r.nextInt(24), r.nextInt(60), r.nextInt(60),
                                r.nextInt(1000));
        default -> String.format(Locale.ROOT, "[%02d:%02d:%02d.%06d]", r.nextInt(24), r.nextInt(60), r.nextInt(60),
                                 r.nextInt(1_000_000));
        };
        String level = LEVELS[r.nextInt(LEVELS.length)];
        String message = switch (r.nextInt(5)) {
        case 0 -> "status=" + (200 + r.nextInt(4) * 100 + r.nextInt(30)) + " duration_ms=" + r.nextInt(3000) + "."
                  + r.nextInt(10) + " request_id=" + hex(r, 16);
        case 1 -> "Started in " + r.nextInt(5000) + " ms, listeners 0.0.0.0:" + (1024 + r.nextInt(60000)) + " and "
                  + "0.0.0.0:" + (1024 + r.nextInt(60000));
        case 2 -> "pool active=" + r.nextInt(64) + " idle=" + r.nextInt(64) + " waiting=" + r.nextInt(100)
                  + ", heap " + r.nextInt(4096) + "/" + (4096 + r.nextInt(4096)) + " MiB";
        case 3 -> "Idempotency store latency p50=" + r.nextInt(10) + "." + r.nextInt(100) + " ms, p99="
                  + r.nextInt(100) + "." + r.nextInt(100) + " ms, " + r.nextInt(100_000) + " keys";
        default -> "GC pause " + r.nextInt(500) + "." + r.nextInt(1000) + " ms, " + r.nextInt(2048) + "M->"
                   + r.nextInt(2048) + "M(" + (2048 + r.nextInt(2048)) + "M)";
        };
        return timestamp + " " + level + " [" + hex(r, 16) + "] com.example.payments.Main: " + message;
    }

    private static String instant(Random r) {
        String fraction = switch (r.nextInt(4)) {
        case 0 -> "";
        case 1 -> "." + digits(r, 3);
        case 2 -> "." + digits(r, 6);
        default -> "." + digits(r, 9);
        };
        String zone = switch (r.nextInt(3)) {
        case 0 -> "Z";
        case 1 -> String.format(Locale.ROOT, "+%02d:00", r.nextInt(14));
        default -> String.format(Locale.ROOT, "-%02d:30", r.nextInt(12));
        };
        String instant = isoLocal(r) + fraction + zone;
        return r.nextBoolean() ? instant : "\"createdAt\":\"" + instant + "\",\"updatedAt\":\"" + isoLocal(r) + fraction
                                            + zone + "\"";
    }

    private static String addressWithPort(Random r) {
        return switch (r.nextInt(5)) {
        case 0 -> "http://" + ipv4(r) + ":" + port(r) + "/v1/authorizations/" + UUID.nameUUIDFromBytes(bytes(r));
        case 1 -> "redis://" + ipv4(r) + ":" + port(r) + "/" + r.nextInt(16);
        case 2 -> "jdbc:postgresql://db-" + r.nextInt(10) + ".internal:" + port(r) + "/payments?connectTimeout="
                  + r.nextInt(30);
        case 3 -> "[" + ipv6(r) + "]:" + port(r);
        default -> "upstream " + ipv4(r) + ":" + port(r) + ", " + ipv4(r) + ":" + port(r) + ", " + ipv4(r) + ":"
                   + port(r);
        };
    }

    private static String ipAddresses(Random r) {
        StringBuilder list = new StringBuilder(r.nextBoolean() ? "X-Forwarded-For: " : "allowed ");
        int count = 1 + r.nextInt(5);
        String separator = new String[] {", ", ",", " ", "; "}[r.nextInt(4)];
        for (int i = 0; i < count; i++) {
            list.append(i == 0 ? "" : separator).append(r.nextInt(3) == 0 ? ipv6(r) : ipv4(r));
            if (r.nextInt(4) == 0) {
                list.append('/').append(8 + r.nextInt(25));
            }
        }
        return list.toString();
    }

    private static String amounts(Random r) {
        int count = 2 + r.nextInt(6);
        StringBuilder list = new StringBuilder();
        int style = r.nextInt(5);
        String currency = CURRENCIES[r.nextInt(CURRENCIES.length)];
        for (int i = 0; i < count; i++) {
            long minor = (long) Math.pow(10, 1 + r.nextDouble() * 7);
            String amount = switch (style) {
            case 0 -> minor / 100 + "." + String.format(Locale.ROOT, "%02d", minor % 100);
            case 1 -> grouped(minor / 100, THOUSANDS[r.nextInt(2)]) + "." + String.format(Locale.ROOT, "%02d",
                                                                                            minor % 100);
            case 2 -> grouped(minor / 100, THOUSANDS[1 + r.nextInt(THOUSANDS.length - 1)]) + ","
                      + String.format(Locale.ROOT, "%02d", minor % 100) + "\u00A0" + currency;
            case 3 -> Long.toString(minor);
            default -> currency + " " + minor / 100 + "." + String.format(Locale.ROOT, "%02d", minor % 100);
            };
            list.append(i == 0 ? "" : style == 3 ? ", " : new String[] {", ", "; ", " / ", " + "}[r.nextInt(4)])
                    .append(amount);
        }
        return (style == 3 ? "amounts=[" : "total ") + list + (style == 3 ? "]" : "");
    }

    private static String orderNumber(Random r) {
        int year = 2020 + r.nextInt(8);
        return switch (r.nextInt(7)) {
        case 0 -> "ORD-" + year + "-" + digits(r, 6);
        case 1 -> "INV/" + year + "/" + String.format(Locale.ROOT, "%02d", 1 + r.nextInt(12)) + "/" + digits(r, 5);
        case 2 -> "order #" + year + String.format(Locale.ROOT, "%02d%02d", 1 + r.nextInt(12), 1 + r.nextInt(28))
                  + "-" + digits(r, 4);
        case 3 -> "PO " + digits(r, 10);
        case 4 -> "invoice " + year + "." + digits(r, 5) + " of order " + digits(r, 8);
        case 5 -> "SO_" + year + "_" + digits(r, 4) + "_" + digits(r, 2);
        default -> "ref " + (char) ('A' + r.nextInt(26)) + (char) ('A' + r.nextInt(26)) + digits(r, 8) + "/"
                   + r.nextInt(100);
        };
    }

    private static String uuids(Random r) {
        String uuid = UUID.nameUUIDFromBytes(bytes(r)).toString();
        return switch (r.nextInt(3)) {
        case 0 -> uuid;
        case 1 -> "id=" + uuid + ", traceparent=00-" + hex(r, 32) + "-" + hex(r, 16) + "-01";
        default -> "/v1/authorizations/" + uuid + " " + UUID.nameUUIDFromBytes(bytes(r)).toString().toUpperCase(
                Locale.ROOT);
        };
    }

    private static String phoneNumber(Random r) {
        return switch (r.nextInt(8)) {
        case 0 -> "+1 " + digits(r, 3) + " " + digits(r, 3) + " " + digits(r, 4);
        case 1 -> "(" + digits(r, 3) + ") " + digits(r, 3) + "-" + digits(r, 4);
        case 2 -> "+44 20 " + digits(r, 4) + " " + digits(r, 4);
        case 3 -> "+49 30 " + digits(r, 8);
        case 4 -> "+33 1 " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2) + " " + digits(r, 2);
        case 5 -> "+49 " + "15" + digits(r, 1) + " " + digits(r, 8);
        case 6 -> "tel. 0" + digits(r, 3) + "/" + digits(r, 7);
        default -> "+41.44." + digits(r, 3) + "." + digits(r, 2) + "." + digits(r, 2);
        };
    }

    private static String dates(Random r) {
        int year = 2000 + r.nextInt(30);
        int month = 1 + r.nextInt(12);
        int day = 1 + r.nextInt(28);
        return switch (r.nextInt(7)) {
        case 0 -> String.format(Locale.ROOT, "%04d-%02d-%02d", year, month, day);
        case 1 -> String.format(Locale.ROOT, "%02d.%02d.%04d", day, month, year);
        case 2 -> String.format(Locale.ROOT, "%02d/%02d/%04d", month, day, year);
        case 3 -> day + " " + MONTHS[month - 1] + " " + year;
        case 4 -> String.format(Locale.ROOT, "%04d-%02d-%02d, %04d-%02d-%02d, %04d-%02d-%02d", year, month, day,
                                year, month, Math.min(day + 1, 28), year, month, Math.min(day + 2, 28));
        case 5 -> String.format(Locale.ROOT, "%02d.%02d.%04d\u2013%02d.%02d.%04d", day, month, year, day,
                                month, year + 1);
        default -> String.format(Locale.ROOT, "%04d/%02d/%02d %02d:%02d", year, month, day, r.nextInt(24),
                                 r.nextInt(60));
        };
    }

    private static String version(Random r) {
        return switch (r.nextInt(5)) {
        case 0 -> r.nextInt(30) + "." + r.nextInt(20) + "." + r.nextInt(50);
        case 1 -> "Java " + (17 + r.nextInt(9)) + ".0." + r.nextInt(10) + "+" + r.nextInt(40) + "-LTS";
        case 2 -> "v" + r.nextInt(10) + "." + r.nextInt(100) + "." + r.nextInt(1000) + "-rc." + r.nextInt(10);
        case 3 -> (2020 + r.nextInt(8)) + "." + (1 + r.nextInt(12)) + "." + r.nextInt(30) + "." + r.nextInt(10000);
        default -> "helidon " + r.nextInt(5) + "." + r.nextInt(10) + "." + r.nextInt(10) + ", jackson 2."
                   + r.nextInt(20) + "." + r.nextInt(5) + ", netty 4.1." + (100 + r.nextInt(20)) + ".Final";
        };
    }

    private static String counts(Random r) {
        return switch (r.nextInt(4)) {
        case 0 -> "processed " + grouped(r.nextInt(100_000_000), THOUSANDS[r.nextInt(THOUSANDS.length)])
                  + " records in " + r.nextInt(100) + "." + r.nextInt(10) + " s";
        case 1 -> "rows " + r.nextInt(1000) + "/" + r.nextInt(1000) + "/" + r.nextInt(1000) + "/" + r.nextInt(1000)
                  + "/" + r.nextInt(1000);
        case 2 -> "coordinates " + r.nextInt(90) + "." + digits(r, 4) + ", " + r.nextInt(180) + "." + digits(r, 4);
        default -> "sizes " + r.nextInt(100) + "_" + r.nextInt(1000) + "_" + r.nextInt(1000) + " bytes, "
                   + r.nextInt(10) + "." + r.nextInt(10) + " GiB";
        };
    }

    private static String isoLocal(Random r) {
        return String.format(Locale.ROOT, "%04d-%02d-%02dT%02d:%02d:%02d", 2020 + r.nextInt(10), 1 + r.nextInt(12),
                             1 + r.nextInt(28), r.nextInt(24), r.nextInt(60), r.nextInt(60));
    }

    private static String ipv4(Random r) {
        return r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256);
    }

    private static String ipv6(Random r) {
        StringBuilder address = new StringBuilder("2001:db8");
        int groups = 2 + r.nextInt(6);
        for (int i = 0; i < groups; i++) {
            address.append(':').append(Integer.toHexString(r.nextInt(65536)));
        }
        return r.nextBoolean() ? address.toString() : "fe80::" + Integer.toHexString(r.nextInt(65536)) + ":"
                                                       + Integer.toHexString(r.nextInt(65536));
    }

    private static int port(Random r) {
        return r.nextBoolean() ? new int[] {80, 443, 5432, 6379, 8080, 8081, 8443, 9090}[r.nextInt(8)]
                : 1024 + r.nextInt(64511);
    }

    private static String grouped(long value, String separator) {
        String plain = Long.toString(value);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < plain.length(); i++) {
            if (i > 0 && (plain.length() - i) % 3 == 0) {
                out.append(separator);
            }
            out.append(plain.charAt(i));
        }
        return out.toString();
    }

    private static String digits(Random r, int count) {
        StringBuilder out = new StringBuilder(count);
        for (int i = 0; i < count; i++) {
            out.append((char) ('0' + r.nextInt(10)));
        }
        return out.toString();
    }

    private static String hex(Random r, int count) {
        StringBuilder out = new StringBuilder(count);
        for (int i = 0; i < count; i++) {
            out.append(Character.forDigit(r.nextInt(16), 16));
        }
        return out.toString();
    }

    private static byte[] bytes(Random r) {
        byte[] bytes = new byte[16];
        r.nextBytes(bytes);
        return bytes;
    }
}
