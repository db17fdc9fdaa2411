package io.sluice.server;

import io.netty.buffer.ByteBuf;

/**
 * Finds the RST_STREAM frames in the bytes one end of an HTTP/2 connection writes, after its connection preface:
 * a frame is a 9-byte header (24-bit payload length, type, flags, 31-bit stream id) and its payload (RFC 9113
 * §4.1), and a RST_STREAM (type 3) carries a 4-byte error code (§6.4). The bytes may come in pieces of any size,
 * as a frame writer hands them down the pipeline (a DATA frame's header and its payload separately, say), so the
 * scanner keeps its place across calls; the payloads of other frames are skipped without being read.
 *
 * <p>Not thread-safe: one scanner per connection, fed on its event loop, from the first byte of a frame on.
 */
final class Http2ResetScanner {

    /** Told of each RST_STREAM frame once its error code has been read. */
    interface Listener {
        void onRstStream(int streamId, long errorCode);
    }

    private static final int FRAME_HEADER = 9;
    private static final int TYPE_RST_STREAM = 0x3;
    private static final int RST_STREAM_PAYLOAD = 4;

    private final Listener listener;
    /** The frame header being read, and then a RST_STREAM's error code. */
    private final byte[] head = new byte[FRAME_HEADER + RST_STREAM_PAYLOAD];
    private int headBytes;
    /** Bytes of the current frame's payload still to skip. */
    private int skip;

    Http2ResetScanner(Listener listener) {
        this.listener = listener;
    }

    /** Reads the readable bytes of {@code bytes} without consuming them. */
    void scan(ByteBuf bytes) {
        int i = bytes.readerIndex();
        int end = bytes.writerIndex();
        while (i < end) {
            if (skip > 0) {
                int n = Math.min(skip, end - i);
                skip -= n;
                i += n;
                continue;
            }
            head[headBytes++] = bytes.getByte(i++);
            if (headBytes == FRAME_HEADER) {
                int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
                if ((head[3] & 0xff) != TYPE_RST_STREAM || length != RST_STREAM_PAYLOAD) {
                    skip = length;
                    headBytes = 0;
                }
            } else if (headBytes == FRAME_HEADER + RST_STREAM_PAYLOAD) {
                listener.onRstStream(word(5) & 0x7fffffff, word(FRAME_HEADER) & 0xffffffffL);
                headBytes = 0;
            }
        }
    }

    private int word(int offset) {
        return ((head[offset] & 0xff) << 24) | ((head[offset + 1] & 0xff) << 16) | ((head[offset + 2] & 0xff) << 8)
                | (head[offset + 3] & 0xff);
    }
}
