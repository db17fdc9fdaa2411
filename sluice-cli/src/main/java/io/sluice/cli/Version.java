package io.sluice.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of this build, for {@code sluice --version}. */
final class Version {

    private Version() {}

    /**
     * The jar manifest's {@code Implementation-Version} when there is one, else the project version the build
     * wrote into {@code version.properties} (so that it is known when running from classes, as tests do).
     */
    static String current() {
        String fromManifest = Version.class.getPackage().getImplementationVersion();
        if (fromManifest != null) {
            return fromManifest;
        }
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (IOException e) {
            // the resource is in the jar; failing to read it leaves the version unknown, which the output says
        }
        return "unknown";
    }
}
