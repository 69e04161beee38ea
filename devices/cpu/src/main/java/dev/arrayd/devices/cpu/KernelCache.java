package dev.arrayd.devices.cpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled kernel libraries by content hash, in memory and on disk.
 *
 * <h2>Key</h2>
 * SHA-256 over everything that decides the library's bytes: the files gcc reads from us (the unit and,
 * for C, the user's file), the flags, the compiler's identity (the first line of {@code gcc --version})
 * and the target ({@code -march=native} compiles for this CPU: its model and feature flags).
 *
 * <h2>Layout of the directory</h2>
 * <pre>
 *   &lt;key&gt;.meta        properties: library (a file name here), symbols (trampoline prefix),
 *                     sha256 (of the library's bytes), diagnostics (gcc's warnings)
 *   lib-&lt;hash&gt;.so     the library; a batch's library serves several keys, each with its own prefix
 * </pre>
 * Files are written under a temporary name and renamed into place, so a reader never sees half a file,
 * and the library before its meta. A meta that does not parse, a missing library or one whose SHA-256
 * differs from the meta's is ignored (and overwritten by the rebuild): a corrupted cache costs a compile,
 * never a crash. Two daemons sharing the directory at worst compile the same key twice.
 *
 * <h2>Single flight</h2>
 * {@link #claim} puts a future into the in-memory map only if none is there: the caller that succeeds
 * builds and {@link #complete}s (or {@link #fail}s, which forgets the key so that a later request tries
 * again); every other caller waits on the same future. Entries of the in-memory map are never evicted:
 * they are small, and their libraries stay on disk.
 */
final class KernelCache {

    /** A library in the cache (or in a private directory when the cache directory cannot be written). */
    record Artifact(Path library, String symbolPrefix, String diagnostics) {}

    private final Path dir;
    private final ConcurrentHashMap<String, CompletableFuture<Artifact>> memory = new ConcurrentHashMap<>();

    KernelCache(Path dir) {
        this.dir = dir;
    }

    Path directory() {
        return dir;
    }

    /** The key of a unit for this compiler and target. */
    static String key(List<String> files, List<String> flags, String compilerId, String target) {
        MessageDigest sha = sha256();
        update(sha, "arrayd-cpu-kernel-cache v1");
        update(sha, compilerId);
        update(sha, target);
        update(sha, String.join(" ", flags));
        for (String f : files) {
            update(sha, f);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static void update(MessageDigest sha, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        sha.update(HexFormat.of().formatHex(longBytes(b.length)).getBytes(StandardCharsets.US_ASCII));
        sha.update(b);
    }

    private static byte[] longBytes(long v) {
        byte[] out = new byte[8];
        for (int i = 0; i < 8; i++) {
            out[i] = (byte) (v >>> (56 - 8 * i));
        }
        return out;
    }

    /** Null when the caller now owns {@code key} and must complete or fail it; else the owner's future. */
    CompletableFuture<Artifact> claim(String key, CompletableFuture<Artifact> mine) {
        return memory.putIfAbsent(key, mine);
    }

    void complete(String key, CompletableFuture<Artifact> mine, Artifact artifact) {
        mine.complete(artifact);
    }

    void fail(String key, CompletableFuture<Artifact> mine, Throwable cause) {
        memory.remove(key, mine);
        mine.completeExceptionally(cause);
    }

    /** The artifact on disk for {@code key}, or null when absent, unreadable or corrupted. */
    Artifact readDisk(String key) {
        Path meta = dir.resolve(key + ".meta");
        if (!Files.isRegularFile(meta)) {
            return null;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(meta, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
        String library = p.getProperty("library");
        String prefix = p.getProperty("symbols");
        String hash = p.getProperty("sha256");
        if (library == null || prefix == null || hash == null || library.contains("/") || library.startsWith(".")) {
            return null;
        }
        Path lib = dir.resolve(library);
        try {
            if (!Files.isRegularFile(lib) || !hash.equals(sha256Of(lib))) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        return new Artifact(lib, prefix, p.getProperty("diagnostics", ""));
    }

    /**
     * Moves a freshly built library into the cache (once per library: {@code keys} share it) and writes
     * each key's meta. Returns the library's new path, or null when the cache directory cannot be written
     * (the caller keeps the library where it is).
     */
    Path store(Path built, List<String> keys, List<String> prefixes, List<String> diagnostics) {
        try {
            Files.createDirectories(dir);
            String hash = sha256Of(built);
            Path lib = dir.resolve("lib-" + hash.substring(0, 32) + ".so");
            if (!Files.isRegularFile(lib) || !hash.equals(sha256Of(lib))) {
                Path tmp = Files.createTempFile(dir, ".lib-", ".tmp");
                Files.copy(built, tmp, StandardCopyOption.REPLACE_EXISTING);
                move(tmp, lib);
            }
            for (int i = 0; i < keys.size(); i++) {
                Properties p = new Properties();
                p.setProperty("library", lib.getFileName().toString());
                p.setProperty("symbols", prefixes.get(i));
                p.setProperty("sha256", hash);
                p.setProperty("diagnostics", diagnostics.get(i));
                Path tmp = Files.createTempFile(dir, ".meta-", ".tmp");
                try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                    p.store(w, "arrayd compiled kernel");
                }
                move(tmp, dir.resolve(keys.get(i) + ".meta"));
            }
            return lib;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    static String sha256Of(Path file) throws IOException {
        MessageDigest sha = sha256();
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[64 * 1024];
            for (int n; (n = in.read(buf)) > 0; ) {
                sha.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
