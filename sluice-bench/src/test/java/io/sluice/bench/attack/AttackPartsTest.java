package io.sluice.bench.attack;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.sluice.bench.attack.RedisFaultProbe.Fault;
import io.sluice.bench.attack.TimedLoad.Answer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The attack suite's pieces that need no server: /proc figures, the hand-encoded gRPC request, the counts, and
 * how a Redis fault's answers are judged (times in milliseconds from an arbitrary origin, as nanoseconds).
 */
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

    private static final long MS = 1_000_000;

    private static Answer answer(long startMs, long endMs, int status) {
        return new Answer(startMs * MS, endMs * MS, status);
    }

    @Test
    void recoveryIsTheFirst200AfterTheLastAbnormalAnswerOfTheRequestsStartedAfterTheFault() {
        long faultEnd = 1_000 * MS;
        List<Answer> load = List.of(answer(900, 1_400, 503), // started during the fault: not counted
                answer(1_010, 1_020, 503), answer(1_030, 1_040, 200), answer(1_050, 1_300, 503),
                answer(1_310, 1_320, 200), answer(1_330, 1_340, 200));
        assertThat(RedisFaultProbe.recoveryMs(load, faultEnd)).isEqualTo(320.0);
        assertThat(RedisFaultProbe.recoveryMs(List.of(answer(1_010, 1_020, 200)), faultEnd))
                .as("normal at once").isEqualTo(20.0);
        assertThat(RedisFaultProbe.recoveryMs(List.of(answer(1_010, 1_020, 200), answer(1_030, 1_040, 503)),
                faultEnd)).as("the last answer is not normal").isEqualTo(-1.0);
        assertThat(RedisFaultProbe.recoveryMs(List.of(), faultEnd)).as("no answer after the fault").isEqualTo(-1.0);
    }

    @Test
    void admissionsPastTheQuotaAreOverAdmission() {
        long faultStart = 1_000 * MS;
        long faultEnd = 2_000 * MS;
        List<Answer> load = List.of(answer(2_010, 2_020, 200));
        List<Answer> quota = new ArrayList<>();
        for (int i = 0; i < RedisFaultProbe.QUOTA; i++) {
            quota.add(answer(i, i + 1, 200));
        }
        quota.add(answer(1_500, 1_600, 503));
        Probe.Outcome held = RedisFaultProbe.judge(Fault.SIGSTOP, load, quota, faultStart, faultEnd);
        assertThat(held.violations()).isEmpty();
        assertThat(held.overAdmitted()).isZero();
        assertThat(held.answers().count("quota during 503")).isEqualTo(1);

        quota.add(answer(2_100, 2_110, 200));
        Probe.Outcome over = RedisFaultProbe.judge(Fault.SIGSTOP, load, quota, faultStart, faultEnd);
        assertThat(over.overAdmitted()).isEqualTo(1);
        assertThat(over.violations()).singleElement().asString().contains("1 over-admitted");
        // A Redis killed without persistence forgets its counters: the fresh one may admit the quota again.
        assertThat(RedisFaultProbe.judge(Fault.SIGKILL, load, quota, faultStart, faultEnd).overAdmitted()).isZero();
    }

    @Test
    void anAnswerOtherThan200Or429Or503AndNoRecoveryAreViolations() {
        long faultStart = 1_000 * MS;
        long faultEnd = 2_000 * MS;
        List<Answer> load = List.of(answer(1_500, 1_600, 500), answer(2_010, 2_020, TimedLoad.FAILED));
        Probe.Outcome outcome = RedisFaultProbe.judge(Fault.CLIENT_PAUSE, load, List.of(), faultStart, faultEnd);
        assertThat(outcome.violations()).hasSize(2);
        assertThat(outcome.violations().get(0)).contains("500 ×1", "failed ×1");
        assertThat(outcome.violations().get(1)).contains("not normal again");
        assertThat(outcome.finding()).startsWith("normal again never");
    }
}
