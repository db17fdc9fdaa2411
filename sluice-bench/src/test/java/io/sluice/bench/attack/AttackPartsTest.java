package io.sluice.bench.attack;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import org.junit.jupiter.api.Test;

/** The attack suite's pieces that need no server: /proc figures, the hand-encoded gRPC request, the counts. */
class AttackPartsTest {

    @Test
    void processStatsReadThisProcessAndNothingOfAMissingOne() {
        long pid = ProcessHandle.current().pid();
        ProcessStats before = ProcessStats.of(pid);
        assertThat(before.rssMb()).isPositive();
        assertThat(before.threads()).isPositive();
        assertThat(before.fds()).as("stdin, stdout, stderr at least").isGreaterThanOrEqualTo(3);
        ProcessStats missing = ProcessStats.of(Long.MAX_VALUE);
        assertThat(missing.fds()).as("no such process").isEqualTo(-1);
        assertThat(missing.rssMb()).isNaN();
    }

    @Test
    void theHandEncodedRequestIsAnEnvoyRateLimitRequest() throws Exception {
        RateLimitRequest request = RateLimitRequest.parseFrom(MalformedGrpcProbe.request("v"));
        assertThat(request.getDomain()).isEqualTo("g");
        assertThat(request.getDescriptors(0).getEntries(0).getKey()).isEqualTo("k");
        assertThat(request.getDescriptors(0).getEntries(0).getValue()).isEqualTo("v");
        byte[] frame = MalformedGrpcProbe.frame(1, new byte[300]);
        assertThat(frame).hasSize(305);
        assertThat(new byte[] {frame[0], frame[3], frame[4]}).containsExactly(1, 1, 44);
    }

    @Test
    void answersCountByOutcomeInOrder() {
        Answers answers = new Answers();
        assertThat(answers).hasToString("none");
        answers.add("400");
        answers.add("200");
        answers.add("400");
        assertThat(answers.count("400")).isEqualTo(2);
        assertThat(answers.total()).isEqualTo(3);
        assertThat(answers).hasToString("200 ×1, 400 ×2");
    }
}
