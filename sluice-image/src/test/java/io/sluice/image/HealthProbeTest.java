package io.sluice.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where the health probe looks for the server, from the same environment variables the server reads. */
class HealthProbeTest {

    @Test
    void withoutSettingsItAsksTheDefaultPortOnLoopback() throws Exception {
        assertThat(HealthProbe.url(Map.of())).hasToString("http://127.0.0.1:8080/health");
    }

    @Test
    void aWildcardBindIsAskedOnLoopbackAndAnAddressOnItself() throws Exception {
        assertThat(HealthProbe.url(Map.of("SLUICE_BIND", "0.0.0.0", "SLUICE_HTTP_PORT", "9090")))
                .hasToString("http://127.0.0.1:9090/health");
        assertThat(HealthProbe.url(Map.of("SLUICE_BIND", "::"))).hasToString("http://127.0.0.1:8080/health");
        assertThat(HealthProbe.url(Map.of("SLUICE_BIND", "10.1.2.3"))).hasToString("http://10.1.2.3:8080/health");
        assertThat(HealthProbe.url(Map.of("SLUICE_BIND", "fd00::1"))).hasToString("http://[fd00::1]:8080/health");
    }

    @Test
    void aTlsCertificateMeansHttps() throws Exception {
        assertThat(HealthProbe.url(Map.of("SLUICE_TLS_CERT", "/etc/sluice/cert.pem")))
                .hasToString("https://127.0.0.1:8080/health");
    }

    @Test
    void aPortThatIsNotOneIsRefusedNamingTheVariable() {
        for (String bad : new String[] {"0", "65536", "http", ""}) {
            assertThatThrownBy(() -> HealthProbe.url(Map.of("SLUICE_HTTP_PORT", bad)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("SLUICE_HTTP_PORT: expected a port from 1 to 65535; was \"" + bad + "\"");
        }
    }
}
