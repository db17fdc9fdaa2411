package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Settings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Http2ResetScannerTest {

    /**
     * A server's side of a connection as Netty's frame writer writes it, with three resets among other frames, and
     * a DATA payload that holds the bytes of a RST_STREAM frame (which must be skipped as payload, not read).
     */
    private static final byte[] WIRE = Http2Wire.write((w, ctx) -> {
        Http2Settings settings = new Http2Settings().maxConcurrentStreams(100);
        w.writeSettings(ctx, settings, ctx.newPromise());
        w.writeHeaders(ctx, 1, new DefaultHttp2Headers().status("200").add("content-type", "application/json"), 0,
                false, ctx.newPromise());
        byte[] lookalike = {0, 0, 4, 3, 0, 0, 0, 0, 7, 0, 0, 0, 1};
        w.writeData(ctx, 1, Unpooled.wrappedBuffer(lookalike), 0, false, ctx.newPromise());
        w.writeRstStream(ctx, 1, Http2Error.PROTOCOL_ERROR.code(), ctx.newPromise());
        w.writeWindowUpdate(ctx, 0, 70_000, ctx.newPromise());
        w.writeData(ctx, 3, Unpooled.wrappedBuffer(new byte[300]), 20, true, ctx.newPromise());
        w.writeRstStream(ctx, 3, Http2Error.CANCEL.code(), ctx.newPromise());
        w.writePing(ctx, false, 42, ctx.newPromise());
        w.writeRstStream(ctx, 0x7fff_ffff, Http2Error.STREAM_CLOSED.code(), ctx.newPromise());
        w.writeGoAway(ctx, 5, Http2Error.NO_ERROR.code(), Unpooled.wrappedBuffer(lookalike), ctx.newPromise());
    });

    private static final List<String> RESETS = List.of("1:1", "3:8", "2147483647:5");

    @Test
    void findsEveryResetWithItsStreamAndErrorCodeAndNothingElse() {
        assertThat(scan(List.of(WIRE))).isEqualTo(RESETS);
    }

    @Test
    void keepsItsPlaceWhateverTheBytesAreCutInto() {
        List<byte[]> oneByOne = new ArrayList<>();
        for (byte b : WIRE) {
            oneByOne.add(new byte[] {b});
        }
        assertThat(scan(oneByOne)).isEqualTo(RESETS);

        Random random = new Random(17);
        for (int round = 0; round < 200; round++) {
            List<byte[]> pieces = new ArrayList<>();
            for (int at = 0; at < WIRE.length; ) {
                int n = Math.min(WIRE.length - at, random.nextInt(40));
                pieces.add(Arrays.copyOfRange(WIRE, at, at + n));
                at += n;
            }
            assertThat(scan(pieces)).as("round %d", round).isEqualTo(RESETS);
        }
    }

    @Test
    void readsOnlyTheReadableBytesAndConsumesNone() {
        List<String> found = new ArrayList<>();
        Http2ResetScanner scanner = new Http2ResetScanner((stream, code) -> found.add(stream + ":" + code));
        var bytes = Unpooled.buffer().writeBytes(new byte[] {9, 9, 9}).writeBytes(WIRE);
        bytes.readerIndex(3);
        scanner.scan(bytes);
        assertThat(found).isEqualTo(RESETS);
        assertThat(bytes.readerIndex()).isEqualTo(3);
    }

    private static List<String> scan(List<byte[]> pieces) {
        List<String> found = new ArrayList<>();
        Http2ResetScanner scanner = new Http2ResetScanner((stream, code) -> found.add(stream + ":" + code));
        for (byte[] piece : pieces) {
            scanner.scan(Unpooled.wrappedBuffer(piece));
        }
        return found;
    }
}
