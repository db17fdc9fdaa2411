package io.sluice.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * The image tarball the build wrote (target/sluice-image.tar, a docker-archive: manifest.json, the config, one
 * tar per layer), read as a runtime would read it: the config the manifest names, and every layer's files with
 * their modes and owners, later layers over earlier ones.
 */
final class ImageTarball {

    static final Path PATH = Path.of("target", "sluice-image.tar");

    /** One file of the image's filesystem, as the layer that last wrote it has it. */
    record File(String path, int mode, long uid, long size, byte[] content) {
        boolean executable() {
            return (mode & 0111) != 0;
        }

        String text() {
            return new String(content, StandardCharsets.UTF_8);
        }
    }

    /** Files up to this size keep their content. */
    private static final long KEPT = 1 << 20;

    final JsonNode manifest;
    final JsonNode config;
    /** Each layer's uncompressed SHA-256 ("sha256:..."), in order: what the config's diff_ids must be. */
    final List<String> diffIds = new ArrayList<>();
    /** The filesystem, by path without a leading "/" or "./". */
    final Map<String, File> files = new LinkedHashMap<>();

    private ImageTarball(JsonNode manifest, JsonNode config) {
        this.manifest = manifest;
        this.config = config;
    }

    static ImageTarball read() throws IOException {
        ObjectMapper json = new ObjectMapper();
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(Files.newInputStream(PATH))) {
            for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
                entries.put(e.getName(), tar.readAllBytes());
            }
        }
        JsonNode manifest = json.readTree(entries.get("manifest.json"));
        JsonNode config = json.readTree(entries.get(manifest.get(0).get("Config").asText()));
        ImageTarball image = new ImageTarball(manifest, config);
        for (JsonNode layer : manifest.get(0).get("Layers")) {
            image.readLayer(entries.get(layer.asText()));
        }
        return image;
    }

    private void readLayer(byte[] bytes) throws IOException {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        InputStream raw = new BufferedInputStream(new ByteArrayInputStream(bytes));
        boolean gzip = bytes.length > 2 && (bytes[0] & 0xff) == 0x1f && (bytes[1] & 0xff) == 0x8b;
        try (DigestInputStream uncompressed = new DigestInputStream(gzip ? new GZIPInputStream(raw) : raw, sha256);
             TarArchiveInputStream tar = new TarArchiveInputStream(uncompressed)) {
            for (TarArchiveEntry e = tar.getNextEntry(); e != null; e = tar.getNextEntry()) {
                String path = e.getName().replaceFirst("^\\./", "").replaceFirst("^/", "").replaceFirst("/$", "");
                byte[] content = e.isFile() && e.getSize() <= KEPT ? tar.readAllBytes() : new byte[0];
                files.put(path, new File(path, e.getMode(), e.getLongUserId(), e.getSize(), content));
            }
            // The digest covers the whole stream, including the end-of-archive blocks the reader stops at.
            uncompressed.transferTo(OutputStream.nullOutputStream());
        }
        diffIds.add("sha256:" + HexFormat.of().formatHex(sha256.digest()));
    }

    File file(String path) {
        File f = files.get(path);
        if (f == null) {
            throw new AssertionError("the image has no " + path);
        }
        return f;
    }

    /** The container configuration ("config" in the image config). */
    JsonNode container() {
        return config.get("config");
    }
}
