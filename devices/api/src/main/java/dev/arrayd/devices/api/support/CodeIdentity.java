package dev.arrayd.devices.api.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * What code this process runs, as a SHA-256 over the jars (or class directories) that hold the given
 * classes: a cache whose entries depend on what that code does (a compile cache keyed on a kernel's
 * source rather than on the text the code rendered from it) includes it in its keys, so that a daemon
 * of another build never takes an entry this one did not make. When a class's code cannot be read, the
 * identity is unique to this process (nothing written earlier matches it).
 */
public final class CodeIdentity {

    private CodeIdentity() {}

    /** The identity of the code of {@code classes}; reads their jars (a few milliseconds, once per caller). */
    public static String of(Class<?>... classes) {
        MessageDigest sha = sha256();
        try {
            for (Class<?> c : classes) {
                Path where = location(c);
                if (where == null) {
                    return unique();
                }
                sha.update(where.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                if (Files.isDirectory(where)) {
                    for (Path f : filesUnder(where)) {
                        sha.update(where.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
                        hashFile(sha, f);
                    }
                } else {
                    hashFile(sha, where);
                }
            }
        } catch (IOException | RuntimeException e) {
            return unique();
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static Path location(Class<?> c) {
        CodeSource cs = c.getProtectionDomain().getCodeSource();
        if (cs == null || cs.getLocation() == null) {
            return null;
        }
        try {
            Path p = Path.of(cs.getLocation().toURI());
            return Files.exists(p) ? p : null;
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }

    private static List<Path> filesUnder(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.filter(Files::isRegularFile).forEach(out::add);
        }
        out.sort(null);
        return out;
    }

    private static void hashFile(MessageDigest sha, Path f) throws IOException {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(f)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                sha.update(buf, 0, n);
            }
        }
        sha.update((byte) 0);
    }

    private static String unique() {
        return "unreadable-" + UUID.randomUUID();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
