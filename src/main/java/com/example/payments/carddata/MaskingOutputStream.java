package com.example.payments.carddata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Passes bytes on line by line with card numbers masked: the stream under {@code System.out} and {@code System.err}.
 *
 * <p>Whole lines are masked, so a PAN written in several pieces is still seen whole. {@link #flush()} does not cut a
 * line short (a {@code PrintStream} flushes after every write); only a line longer than 64 KiB is passed on in
 * pieces, each cut outside a run of digits and separators. A line of well-formed UTF-8 holding other bytes than ASCII
 * is read as UTF-8, so that a card number written with a no-break space, an en dash or a zero-width space between its
 * groups is seen as the detector sees it in a log record; any other line is read as ISO-8859-1, which maps each byte
 * to one char and back. Either way the output is the input byte for byte except for masked digits, whatever the
 * console's encoding (well-formed UTF-8 decodes and encodes back to the same bytes).
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
            // Digits, ASCII separators, and any byte of a multi-byte character (a Unicode separator or digit).
            if (!(b >= '0' && b <= '9' || b < 0 || " -._/+,".indexOf(b) >= 0)) {
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
        Charset charset = isAscii(pending, count) || !isUtf8(pending, count)
                ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8;
        String text = new String(pending, 0, count, charset);
        String masked = PanDetector.mask(text);
        if (masked == text) {
            out.write(pending, 0, count);
        } else {
            out.write(masked.getBytes(charset));
        }
        line.reset();
        line.write(pending, count, pending.length - count);
        out.flush();
    }

    private static boolean isAscii(byte[] bytes, int count) {
        for (int i = 0; i < count; i++) {
            if (bytes[i] < 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isUtf8(byte[] bytes, int count) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, 0, count));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
