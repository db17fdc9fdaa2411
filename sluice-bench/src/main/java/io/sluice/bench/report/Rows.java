package io.sluice.bench.report;

import io.sluice.bench.Measurement;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/** Looks rows up in one run's measurements: the report compares rows of the same run only. */
final class Rows {
    private final List<Measurement> all;

    Rows(List<Measurement> all) {
        this.all = all;
    }

    List<Measurement> where(Predicate<Measurement> predicate) {
        return all.stream().filter(predicate).toList();
    }

    /** The measured row of a suite matching every given field (null: any). */
    Optional<Measurement> find(String suite, String system, String algorithm, String mode, Integer keys,
                               Integer threads, Integer inFlight, String variant) {
        return all.stream()
                .filter(Measurement::measured)
                .filter(m -> m.suite().equals(suite))
                .filter(m -> system == null || system.equals(m.system()))
                .filter(m -> algorithm == null || algorithm.equals(m.algorithm()))
                .filter(m -> mode == null || mode.equals(m.mode()))
                .filter(m -> keys == null || keys.equals(m.keys()))
                .filter(m -> threads == null || threads.equals(m.threads()))
                .filter(m -> inFlight == null || inFlight.equals(m.inFlight()))
                .filter(m -> variant == null || variant.equals(m.variant()))
                .findFirst();
    }

    /** Sluice's row with {@code algorithm} in the same place as {@code peer} (same suite, mode, keys, load). */
    Optional<Measurement> sluiceBeside(Measurement peer, String algorithm) {
        return all.stream()
                .filter(Measurement::measured)
                .filter(m -> m.suite().equals(peer.suite()) && "sluice".equals(m.system()))
                .filter(m -> algorithm.equals(m.algorithm()))
                .filter(m -> !"redis-benchmark".equals(m.variant()))
                .filter(m -> Objects.equals(m.mode(), peer.mode()) && Objects.equals(m.keys(), peer.keys()))
                .filter(m -> Objects.equals(m.threads(), peer.threads())
                        && Objects.equals(m.inFlight(), peer.inFlight()))
                .findFirst();
    }
}
