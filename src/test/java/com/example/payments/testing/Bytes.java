package com.example.payments.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Request bodies as bytes, for tests that send what a string cannot hold (invalid UTF-8, a byte order mark).
 */
public final class Bytes {

    private Bytes() {
    }

    /**
     * UTF-8 bytes of a text.
     *
     * @param text the text
     * @return its bytes
     */
    public static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Byte arrays one after the other.
     *
     * @param parts the arrays
     * @return one array
     */
    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
