package io.sluice.bench.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class MonitorCaptureTest {

    @Test
    void aMonitorLineIsSplitIntoItsUnquotedWords() {
        String line = "1700000000.123456 [0 127.0.0.1:40000] \"EVALSHA\" \"ab12\" \"1\" \"k:{a b}\" \"say \\\"hi\\\"\""
                + " \"\" \"\\x01\\n\"";
        assertThat(RedisBenchmarkCeiling.parseMonitorLine(line))
                .containsExactly("EVALSHA", "ab12", "1", "k:{a b}", "say \"hi\"", "", "\u0001\n");
    }

    @Test
    void whatDiffersBetweenTwoCallsBecomesRandom() {
        List<String> first = List.of("EVALSHA", "sha", "2", "p:{r:hot-key}:tb", "p:{r:hot-key}:id:abc.17", "try",
                "abc.17");
        List<String> second = List.of("EVALSHA", "sha", "2", "p:{r:hot-key}:tb", "p:{r:hot-key}:id:abc.18", "try",
                "abc.18");
        assertThat(RedisBenchmarkCeiling.template(first, second)).containsExactly("EVALSHA", "sha", "2",
                "p:{r:hot-key}:tb", "p:{r:hot-key}:id:abc.__rand_int____rand_int__", "try",
                "abc.__rand_int____rand_int__");
    }
}
