package io.sluice.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** The versions of the libraries measured, as the build resolved them (bench-versions.properties). */
public final class Versions {
    private Versions() {}

    /** Library name to version; Redis and redis-benchmark are added by the suites that start them. */
    public static Map<String, String> libraries() {
        Properties p = new Properties();
        try (InputStream in = Versions.class.getResourceAsStream("/bench-versions.properties")) {
            if (in == null) {
                throw new IllegalStateException("bench-versions.properties is missing from the class path");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> versions = new TreeMap<>();
        p.stringPropertyNames().forEach(name -> versions.put(name, p.getProperty(name)));
        return versions;
    }
}
