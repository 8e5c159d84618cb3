package com.example.payments.carddata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Passes bytes on line by line with card numbers masked: the stream under {@code System.out} and {@code System.err}.
 *
 * <p>Whole lines are masked, so a PAN written in several pieces is still seen whole. {@link #flush()} does not cut a
 * line short (a {@code PrintStream} flushes after every write); only a line longer than 64 KiB is passed on in
 * pieces, each cut outside a run of digits. Bytes are read as ISO-8859-1, which maps each byte to one char and back:
 * the output is the input byte for byte except for masked ASCII digits, whatever the console's encoding.
 */
final class MaskingOutputStream extends OutputStream {

    private static final int MAX_PENDING = 64 * 1024;

    private final OutputStream out;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);

    MaskingOutputStream(OutputStream out) {
        this.out = out;
    }

    @Override
    public synchronized void write(int b) throws IOException {
        line.write(b);
        if (b == '\n') {
            emit(line.size());
        } else if (line.size() > MAX_PENDING) {
            emitPart();
        }
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
        int start = offset;
        int end = offset + length;
        for (int i = offset; i < end; i++) {
            if (bytes[i] == '\n') {
                line.write(bytes, start, i + 1 - start);
                start = i + 1;
                emit(line.size());
            }
        }
        line.write(bytes, start, end - start);
        if (line.size() > MAX_PENDING) {
            emitPart();
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        emit(line.size());
        out.close();
    }

    // A part of an over-long line, cut after its last byte that cannot belong to a PAN.
    private void emitPart() throws IOException {
        byte[] pending = line.toByteArray();
        int cut = pending.length;
        for (int i = pending.length - 1; i > 0; i--) {
            byte b = pending[i - 1];
            if (!(b >= '0' && b <= '9' || b == ' ' || b == '-')) {
                cut = i;
                break;
            }
        }
        emit(cut);
    }

    private void emit(int count) throws IOException {
        if (count == 0) {
            return;
        }
        byte[] pending = line.toByteArray();
        String text = new String(pending, 0, count, StandardCharsets.ISO_8859_1);
        String masked = PanDetector.mask(text);
        if (masked == text) {
            out.write(pending, 0, count);
        } else {
            out.write(masked.getBytes(StandardCharsets.ISO_8859_1));
        }
        line.reset();
        line.write(pending, count, pending.length - count);
        out.flush();
    }
}
