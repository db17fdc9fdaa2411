package io.sluice.bench.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Why a missed target is missed and what comes next, written by hand in {@code missed-targets.md} beside this
 * class: each {@code ### } heading is the start of a target's text, and the paragraph under it is shown under the
 * targets table only while a run misses a target that starts with it. A run that meets the target drops its
 * explanation, so the page never explains a miss that did not happen.
 */
final class MissedTargets {

    private final Map<String, String> reasons;

    MissedTargets(Map<String, String> reasons) {
        this.reasons = reasons;
    }

    /** The explanations shipped with the benchmarks. */
    static MissedTargets shipped() {
        try (InputStream in = MissedTargets.class.getResourceAsStream("missed-targets.md")) {
            if (in == null) {
                throw new IllegalStateException("missed-targets.md is not on the class path");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Headings ({@code ### target prefix}) and the text under each, up to the next heading. */
    static MissedTargets parse(String text) {
        Map<String, String> reasons = new LinkedHashMap<>();
        String heading = null;
        StringBuilder body = new StringBuilder();
        for (String line : (text + "\n### ").split("\n", -1)) {
            if (line.startsWith("### ")) {
                if (heading != null) {
                    reasons.put(heading, body.toString().strip().replaceAll("\\s*\n\\s*", " "));
                }
                heading = line.substring(4).strip();
                body.setLength(0);
            } else if (heading != null) {
                body.append(line).append('\n');
            }
        }
        return new MissedTargets(reasons);
    }

    /** For each explained target prefix that a missed check starts with: the prefix and its explanation. */
    List<Map.Entry<String, String>> explain(List<Targets.Check> checks) {
        List<Map.Entry<String, String>> shown = new ArrayList<>();
        for (Map.Entry<String, String> reason : reasons.entrySet()) {
            boolean missed = checks.stream().anyMatch(c -> Boolean.FALSE.equals(c.met())
                    && c.target().startsWith(reason.getKey()));
            if (missed) {
                shown.add(reason);
            }
        }
        return shown;
    }
}
