/** Sluice's events as Micrometer meters. */
module io.sluice.micrometer {
    requires transitive io.sluice;
    // SluiceMetrics is built on a MeterRegistry.
    requires transitive micrometer.core;

    exports io.sluice.micrometer;
}
