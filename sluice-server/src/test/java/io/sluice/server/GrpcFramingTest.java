package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** Which bodies {@link GrpcFraming} lets through to the gRPC layer, and how it refuses the others. */
class GrpcFramingTest {

    private static final int MAX = 100;

    @Test
    void exactlyOneMessagePasses() {
        assertThat(GrpcFraming.problem(MalformedGrpcIT.frame(0, new byte[10]), MAX)).isNull();
        assertThat(GrpcFraming.problem(MalformedGrpcIT.frame(1, new byte[10]), MAX)).isNull();
        assertThat(GrpcFraming.problem(MalformedGrpcIT.frame(0, new byte[0]), MAX)).isNull();
        assertThat(GrpcFraming.problem(MalformedGrpcIT.frame(0, new byte[MAX]), MAX)).isNull();
    }

    @Test
    void everythingElseIsRefusedSayingWhy() {
        assertRefused(new byte[3], Status.Code.INVALID_ARGUMENT, "shorter than a message header");
        assertRefused(MalformedGrpcIT.frame(2, new byte[1]), Status.Code.INVALID_ARGUMENT, "compressed flag 2");
        byte[] two = new byte[30];
        System.arraycopy(MalformedGrpcIT.frame(0, new byte[10]), 0, two, 0, 15);
        System.arraycopy(MalformedGrpcIT.frame(0, new byte[10]), 0, two, 15, 15);
        assertRefused(two, Status.Code.INVALID_ARGUMENT, "exactly one message; 15 bytes follow the first");
        byte[] cut = java.util.Arrays.copyOf(MalformedGrpcIT.frame(0, new byte[10]), 12);
        assertRefused(cut, Status.Code.INVALID_ARGUMENT, "says 10 bytes but 7 follow");
        // A huge declared length with nothing behind it is malformed, not large.
        byte[] claim = {0, (byte) 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2};
        assertRefused(claim, Status.Code.INVALID_ARGUMENT, "says 2147483647 bytes but 2 follow");
        assertRefused(MalformedGrpcIT.frame(0, new byte[MAX + 1]), Status.Code.RESOURCE_EXHAUSTED,
                "request too large: the limit is 100 bytes");
    }

    @Test
    void grpcMessagesArePercentEncodedUtf8() {
        assertThat(GrpcFraming.percentEncode("50% of \u00e9\n")).isEqualTo("50%25 of %C3%A9%0A");
    }

    private static void assertRefused(byte[] body, Status.Code code, String message) {
        Status s = GrpcFraming.problem(body, MAX);
        assertThat(s).isNotNull();
        assertThat(s.getCode()).isEqualTo(code);
        assertThat(s.getDescription()).contains(message);
    }
}
