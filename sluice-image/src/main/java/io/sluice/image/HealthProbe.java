package io.sluice.image;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Map;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The container image's health check: asks {@code GET /health} of the {@code sluice serve} running in the same
 * container and exits 0 when it answers 200, 1 otherwise, with one line saying what it saw. The image has no
 * shell and no curl, so the check is this class, run by the image's own Java runtime (see
 * {@code src/image/build-base.sh} for the command and its timing).
 *
 * <p>It finds the server the way the server finds its settings from the environment: the port is
 * {@code SLUICE_HTTP_PORT} (default 8080), the address {@code SLUICE_BIND} unless that is a wildcard (then
 * loopback), and HTTPS when {@code SLUICE_TLS_CERT} is set, trusting exactly that certificate (the probe talks to
 * its own server, whatever name the certificate carries). A port or address set only in a {@code --config} file
 * or on the command line is not seen: such a deployment overrides the health check (see
 * docs/operations/server.md). {@code /health} needs no token.
 */
public final class HealthProbe {

    private static final int TIMEOUT_MILLIS = 5_000;

    private HealthProbe() {
    }

    /**
     * Runs the probe against the server the environment describes.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        int status;
        try {
            URL url = url(System.getenv());
            int code = get(url, System.getenv("SLUICE_TLS_CERT"));
            System.out.println("sluice health probe: " + url + " answered " + code);
            status = code == 200 ? 0 : 1;
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            System.out.println("sluice health probe: " + e);
            status = 1;
        }
        System.exit(status);
    }

    /**
     * The health URL of the server that {@code env} configures.
     *
     * @param env the environment ({@code SLUICE_HTTP_PORT}, {@code SLUICE_BIND}, {@code SLUICE_TLS_CERT})
     * @return the URL of {@code /health}
     * @throws IllegalArgumentException when {@code SLUICE_HTTP_PORT} is not a port from 1 to 65535
     * @throws IOException when the URL cannot be formed from the address
     */
    static URL url(Map<String, String> env) throws IOException {
        String portText = env.getOrDefault("SLUICE_HTTP_PORT", "8080").trim();
        int port;
        try {
            port = Integer.parseInt(portText);
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("SLUICE_HTTP_PORT: expected a port from 1 to 65535; was \""
                    + portText + "\"");
        }
        String bind = env.getOrDefault("SLUICE_BIND", "").trim();
        String host = switch (bind) {
            case "", "0.0.0.0", "::", "[::]", "*" -> "127.0.0.1";
            default -> bind.contains(":") && !bind.startsWith("[") ? "[" + bind + "]" : bind;
        };
        String scheme = env.getOrDefault("SLUICE_TLS_CERT", "").isBlank() ? "http" : "https";
        return new URL(scheme + "://" + host + ":" + port + "/health");
    }

    private static int get(URL url, String certificateFile) throws IOException, GeneralSecurityException {
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        if (connection instanceof HttpsURLConnection https) {
            https.setSSLSocketFactory(trusting(Path.of(certificateFile)).getSocketFactory());
            https.setHostnameVerifier((name, session) -> true);
        }
        connection.setConnectTimeout(TIMEOUT_MILLIS);
        connection.setReadTimeout(TIMEOUT_MILLIS);
        try {
            int code = connection.getResponseCode();
            try (InputStream body = code < 400 ? connection.getInputStream() : connection.getErrorStream()) {
                if (body != null) {
                    body.readAllBytes();
                }
            }
            return code;
        } finally {
            connection.disconnect();
        }
    }

    /** A TLS context that trusts the certificates in {@code pem} and nothing else. */
    private static SSLContext trusting(Path pem) throws IOException, GeneralSecurityException {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream in = Files.newInputStream(pem)) {
            int i = 0;
            for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trusted.setCertificateEntry("server-" + i++, certificate);
            }
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }
}
