package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

/**
 * The image tarball Jib writes (OCI layout: index.json → manifest → config and layers), unpacked into a
 * directory once per test JVM, with every blob's digest verified.
 */
final class OciImage {

    /** One path of the image's filesystem (after all layers), as its last layer wrote it. */
    record Entry(String path, int mode, long size, boolean directory, String symlinkTarget, int layer) {
        boolean executableByOthers() {
            return (mode & 0b001) != 0;
        }

        boolean readableByOthers() {
            return (mode & 0b100) != 0;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static OciImage cached;

    final Path tar;
    final Path layout;
    final JsonNode index;
    final JsonNode manifest;
    final JsonNode config;
    final List<Path> layers = new ArrayList<>();
    final Map<String, Entry> files = new LinkedHashMap<>();

    static Path tarPath() {
        return Path.of(System.getProperty("arrayd.image.tar", DeployFiles.module().resolve("target/arrayd-image.tar").toString()));
    }

    static synchronized OciImage load() {
        if (cached == null) {
            try {
                cached = new OciImage(tarPath());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return cached;
    }

    private OciImage(Path tar) throws IOException {
        this.tar = tar;
        assertTrue(Files.isRegularFile(tar), "the image tar " + tar + " (built by `package`)");
        layout = tar.resolveSibling("arrayd-image-layout");
        deleteTree(layout);
        try (TarArchiveInputStream in = new TarArchiveInputStream(Files.newInputStream(tar))) {
            for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                Path p = layout.resolve(e.getName()).normalize();
                assertTrue(p.startsWith(layout), "entry inside the layout: " + e.getName());
                if (e.isDirectory()) {
                    Files.createDirectories(p);
                } else {
                    Files.createDirectories(p.getParent());
                    Files.copy(in, p);
                }
            }
        }
        index = JSON.readTree(layout.resolve("index.json").toFile());
        assertEquals(1, index.path("manifests").size(), "one image in index.json");
        manifest = JSON.readTree(blob(index.path("manifests").get(0).path("digest").asText()).toFile());
        config = JSON.readTree(blob(manifest.path("config").path("digest").asText()).toFile());
        int n = 0;
        for (JsonNode layer : manifest.path("layers")) {
            assertEquals("application/vnd.oci.image.layer.v1.tar+gzip", layer.path("mediaType").asText());
            Path p = blob(layer.path("digest").asText());
            layers.add(p);
            try (TarArchiveInputStream in = new TarArchiveInputStream(new GzipCompressorInputStream(Files.newInputStream(p)))) {
                for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                    String path = "/" + e.getName().replaceFirst("^\\./", "").replaceFirst("^/", "").replaceFirst("/$", "");
                    files.put(path, new Entry(path, e.getMode(), e.getSize(), e.isDirectory(),
                            e.isSymbolicLink() ? e.getLinkName() : null, n));
                }
            }
            n++;
        }
    }

    /** The blob of a digest, after checking that its bytes hash to it. */
    Path blob(String digest) throws IOException {
        assertTrue(digest.startsWith("sha256:"), digest);
        Path p = layout.resolve("blobs/sha256").resolve(digest.substring(7));
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream in = new DigestInputStream(Files.newInputStream(p), sha)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        assertEquals(digest.substring(7), HexFormat.of().formatHex(sha.digest()), "digest of " + p.getFileName());
        return p;
    }

    /** Follows symlinks (in every path component) to the entry a path names, or null. */
    Entry resolve(String path) {
        String current = path;
        for (int hops = 0; hops < 40; hops++) {
            String[] parts = current.replaceFirst("^/", "").split("/");
            StringBuilder walked = new StringBuilder();
            String next = null;
            for (int i = 0; i < parts.length; i++) {
                walked.append('/').append(parts[i]);
                Entry e = files.get(walked.toString());
                if (e == null) {
                    return null;
                }
                if (e.symlinkTarget() != null) {
                    String target = e.symlinkTarget();
                    String base = target.startsWith("/") ? target
                            : walked.substring(0, walked.lastIndexOf("/")) + "/" + target;
                    String rest = String.join("/", java.util.Arrays.copyOfRange(parts, i + 1, parts.length));
                    next = java.nio.file.Path.of(base + (rest.isEmpty() ? "" : "/" + rest)).normalize().toString();
                    break;
                }
            }
            if (next == null) {
                return files.get(walked.toString());
            }
            current = next;
        }
        return null;
    }

    /** The bytes of one file of one layer. */
    byte[] read(Entry entry) throws IOException {
        try (TarArchiveInputStream in = new TarArchiveInputStream(new GzipCompressorInputStream(
                Files.newInputStream(layers.get(entry.layer()))))) {
            for (TarArchiveEntry e; (e = in.getNextEntry()) != null; ) {
                String path = "/" + e.getName().replaceFirst("^\\./", "").replaceFirst("^/", "").replaceFirst("/$", "");
                if (path.equals(entry.path())) {
                    return in.readAllBytes();
                }
            }
        }
        throw new IOException(entry.path() + " not in layer " + entry.layer());
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
