package io.sluice.server;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Strict UTF-8 for request bodies. Decoders that repair — {@code new String(bytes, UTF_8)} and Armeria's
 * {@code contentUtf8()} turn a malformed sequence into U+FFFD, Jackson reads overlong forms ({@code C0 AF} as
 * {@code '/'}) and encoded surrogates ({@code ED A0 80}) as if they were valid — would let two different byte
 * strings name one key, or make a key that a store cannot encode. So a body must be well-formed UTF-8 (RFC 3629:
 * shortest form, no surrogates, nothing above U+10FFFF) before it is parsed, and is refused otherwise.
 */
final class Utf8 {

    private Utf8() {}

    /**
     * The offset of the first byte of the first malformed sequence in {@code bytes}, or -1 when all of it is
     * well-formed UTF-8 (a sequence cut off at the end is malformed).
     */
    static int malformedAt(byte[] bytes) {
        int i = 0;
        // Most bodies are ASCII: settle them without a decoder.
        while (i < bytes.length && bytes[i] >= 0) {
            i++;
        }
        if (i == bytes.length) {
            return -1;
        }
        // The JDK's decoder implements RFC 3629 strictly (overlong forms, surrogates and > U+10FFFF are malformed).
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes, i, bytes.length - i);
        CharBuffer out = CharBuffer.allocate(Math.min(bytes.length - i, 8192));
        while (true) {
            CoderResult result = decoder.decode(in, out, true);
            if (result.isError()) {
                return in.position();
            }
            if (!result.isOverflow()) {
                return -1; // all read (UTF-8 keeps no state to flush)
            }
            out.clear();
        }
    }

    /** @throws InvalidRequestException naming the offset of the first malformed byte */
    static void require(byte[] body) throws InvalidRequestException {
        int at = malformedAt(body);
        if (at >= 0) {
            throw InvalidRequestException.at("", "the body is not UTF-8: a malformed byte sequence at byte " + at
                    + " (0x" + String.format("%02X", body[at] & 0xff) + ")");
        }
    }
}
