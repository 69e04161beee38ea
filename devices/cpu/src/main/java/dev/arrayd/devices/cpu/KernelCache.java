package dev.arrayd.devices.cpu;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import dev.arrayd.devices.api.support.DigestWriter;

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
 *                     sha256 (of the library's bytes: its name), crc32c (its length and CRC-32C, checked on
 *                     every load from disk), diagnostics (gcc's warnings)
 *   lib-&lt;hash&gt;.so     the library; a batch's library serves several keys, each with its own prefix
 *   &lt;source&gt;.src      an IR source's key (see {@link #sourceKey}): the key of its meta, one line
 * </pre>
 * An IR source is found by its own content before anything is rendered from it: a {@code .src} entry names the
 * key its unit had, so a hit after a restart reads two small files and loads the library, without validating,
 * rendering or hashing the unit again. The source key includes the identity of the code that renders
 * ({@link dev.arrayd.devices.api.support.CodeIdentity}): another build of arrayd never takes this one's entries.
 * A {@code .src} entry whose meta is gone is ignored (the source is translated and built as on a miss) and
 * deleted by the next trim.
 * Files are written under a temporary name and renamed into place, so a reader never sees half a file,
 * and the library before its meta. A meta that does not parse, a missing library or one whose length and
 * CRC-32C differ from the meta's (its SHA-256, for a meta without them) is ignored (and overwritten by the
 * rebuild): a corrupted cache costs a compile, never a crash. Two daemons sharing the directory at worst compile the same key twice.
 *
 * <h2>Single flight</h2>
 * {@link #claim} puts a future into the in-memory map only if none is there: the caller that succeeds
 * builds and {@link #complete}s (or {@link #fail}s, which forgets the key so that a later request tries
 * again); every other caller waits on the same future.
 *
 * <h2>Bounds</h2>
 * The directory holds at most {@code maxBytes}: after a compile that stored something, when it holds more,
 * the libraries used least recently (by modification time, which every use renews) are deleted with the metas
 * that name them, down to 90% of the bound; a later compile of one of them builds it again. Deleting a
 * library that a module has loaded is harmless (the mapping stays), but one about to be loaded is not: every
 * compile holds the cache's read lock from its lookups to its loads, and a trim runs only when it gets the
 * write lock at once (else the next compile trims). The in-memory map keeps at most
 * {@value #MAX_MEMORY_ENTRIES} finished entries; past that, finished ones are dropped (their libraries stay on
 * disk).
 */
final class KernelCache {

    /** A library in the cache (or in a private directory when the cache directory cannot be written). */
    record Artifact(Path library, String symbolPrefix, String diagnostics) {}

    /** Most finished entries of the in-memory map. */
    static final int MAX_MEMORY_ENTRIES = 4096;

    private final Path dir;
    private final long maxBytes;
    private final ConcurrentHashMap<String, CompletableFuture<Artifact>> memory = new ConcurrentHashMap<>();
    private final ReentrantReadWriteLock files = new ReentrantReadWriteLock();
    /** Whether something was stored since the last trim of the directory. */
    private volatile boolean stored;

    KernelCache(Path dir, long maxBytes) {
        this.dir = dir;
        this.maxBytes = maxBytes;
    }

    /** Held by a compile from its lookups to its loads: no trim deletes a library in between. */
    Lock useLock() {
        return files.readLock();
    }

    /** Marks {@code a}'s library used now (the trim deletes the least recently used first). */
    void used(Artifact a) {
        if (!a.library().startsWith(dir)) {
            return;
        }
        long now = System.currentTimeMillis();
        Long last = touched.get(a.library());
        if (last != null && now - last < TOUCH_INTERVAL_MILLIS) {
            return; // recent enough for the LRU order: no file system call on every hit
        }
        touched.put(a.library(), now);
        try {
            Files.setLastModifiedTime(a.library(), FileTime.fromMillis(now));
        } catch (IOException | RuntimeException e) {
            // a library that cannot be touched is only evicted earlier
        }
    }

    /** How stale a library's modification time may get before a hit refreshes it (the disk LRU's resolution). */
    static final long TOUCH_INTERVAL_MILLIS = 60_000;

    /** When each library's modification time was last set by a hit. */
    private final java.util.concurrent.ConcurrentHashMap<Path, Long> touched = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Deletes least recently used libraries (and the metas naming them) while the directory holds more than
     * {@code maxBytes}, down to 90% of it, and drops finished in-memory entries past {@link #MAX_MEMORY_ENTRIES}.
     * Does nothing when a compile holds the cache (the next call trims). Returns how many libraries went.
     */
    int trim() {
        if (memory.size() > MAX_MEMORY_ENTRIES) {
            for (var e : memory.entrySet()) {
                if (memory.size() <= MAX_MEMORY_ENTRIES) {
                    break;
                }
                if (e.getValue().isDone()) {
                    memory.remove(e.getKey(), e.getValue());
                }
            }
        }
        if (!stored || !files.writeLock().tryLock()) {
            return 0;
        }
        try {
            stored = false;
            return trimDisk();
        } catch (IOException | RuntimeException e) {
            return 0; // a directory that cannot be listed is not ours to clean
        } finally {
            files.writeLock().unlock();
        }
    }

    private int trimDisk() throws IOException {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        record Lib(Path path, long bytes, long used) {}
        List<Lib> libs = new ArrayList<>();
        List<Path> metas = new ArrayList<>();
        long total = 0;
        try (var listing = Files.list(dir)) {
            for (Path f : (Iterable<Path>) listing::iterator) {
                if (!Files.isRegularFile(f)) {
                    continue;
                }
                long size = Files.size(f);
                total += size;
                String name = f.getFileName().toString();
                if (name.startsWith("lib-") && name.endsWith(".so")) {
                    libs.add(new Lib(f, size, Files.getLastModifiedTime(f).toMillis()));
                } else if (name.endsWith(".meta")) {
                    metas.add(f);
                }
            }
        }
        if (total <= maxBytes) {
            return 0;
        }
        libs.sort(Comparator.comparingLong(Lib::used));
        Set<String> gone = new HashSet<>();
        long target = maxBytes / 10 * 9;
        for (Lib l : libs) {
            if (total <= target) {
                break;
            }
            Files.deleteIfExists(l.path());
            touched.remove(l.path());
            total -= l.bytes();
            gone.add(l.path().getFileName().toString());
        }
        for (Path m : metas) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(m, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException | IllegalArgumentException e) {
                continue;
            }
            if (gone.contains(p.getProperty("library", ""))) {
                Files.deleteIfExists(m);
            }
        }
        if (!gone.isEmpty()) {
            try (var listing = Files.list(dir)) {
                for (Path f : (Iterable<Path>) listing::iterator) {
                    if (f.getFileName().toString().endsWith(SOURCE_SUFFIX)) {
                        String key = readKeyFile(f);
                        if (key == null || !Files.isRegularFile(dir.resolve(key + ".meta"))) {
                            Files.deleteIfExists(f);
                        }
                    }
                }
            }
        }
        memory.values().removeIf(f -> f.isDone() && !f.isCompletedExceptionally() && f.join().library().startsWith(dir)
                && gone.contains(f.join().library().getFileName().toString()));
        return gone.size();
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

    private static final String SOURCE_SUFFIX = ".src";

    /**
     * The key of an IR source by its content: its module's {@link dev.arrayd.devices.api.ir.IrDigest} with
     * everything else that decides what it compiles to (the identity of the code that renders it, the compiler's,
     * the target, the flags, forced guards, the lane rule), each written with a tag and its length.
     */
    static String sourceKey(String codeIdentity, String compilerId, String target, List<String> flags, boolean forceGuards,
                            String lanes, String irDigest) {
        DigestWriter d = new DigestWriter().text('V', "arrayd-cpu-kernel-source v2").text('C', codeIdentity)
                .text('G', compilerId).text('T', target).tag('F', flags.size());
        for (String f : flags) {
            d.text('f', f);
        }
        return d.tag('g', forceGuards ? 1 : 0).text('L', lanes).text('M', irDigest).hex();
    }

    /** The unit key an IR source's key names on disk, or null (no entry, or one that does not parse). */
    String readSourceIndex(String sourceKey) {
        return readKeyFile(dir.resolve(sourceKey + SOURCE_SUFFIX));
    }

    private static String readKeyFile(Path f) {
        try {
            if (!Files.isRegularFile(f) || Files.size(f) > 128) {
                return null;
            }
            String key = Files.readString(f, StandardCharsets.US_ASCII).trim();
            return isKey(key) ? key : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static boolean isKey(String s) {
        if (s.length() != 64) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** Records that the IR source {@code sourceKey} compiles to the unit {@code key} (whose meta is on disk). */
    void storeSourceIndex(String sourceKey, String key) {
        try {
            Path target = dir.resolve(sourceKey + SOURCE_SUFFIX);
            if (key.equals(readKeyFile(target)) || !Files.isRegularFile(dir.resolve(key + ".meta"))) {
                return;
            }
            Path tmp = Files.createTempFile(dir, ".src-", ".tmp");
            Files.writeString(tmp, key + "\n", StandardCharsets.US_ASCII);
            move(tmp, target);
        } catch (IOException | RuntimeException e) {
            // without the entry, the next restart translates the source before it finds the library
        }
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
        String crc = p.getProperty("crc32c");
        if (library == null || prefix == null || hash == null || library.contains("/") || library.startsWith(".")) {
            return null;
        }
        Path lib = dir.resolve(library);
        try {
            if (!Files.isRegularFile(lib)) {
                return null;
            }
            byte[] bytes = Files.readAllBytes(lib);
            boolean intact = crc != null ? crc.equals(crc32cOf(bytes)) : hash.equals(sha256Of(bytes));
            if (!intact) {
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
        stored = true;
        try {
            Files.createDirectories(dir);
            byte[] bytes = Files.readAllBytes(built);
            String hash = sha256Of(bytes);
            String crc = crc32cOf(bytes);
            Path lib = dir.resolve("lib-" + hash.substring(0, 32) + ".so");
            if (!Files.isRegularFile(lib) || !hash.equals(sha256Of(Files.readAllBytes(lib)))) {
                Path tmp = Files.createTempFile(dir, ".lib-", ".tmp");
                Files.write(tmp, bytes);
                move(tmp, lib);
            }
            for (int i = 0; i < keys.size(); i++) {
                Properties p = new Properties();
                p.setProperty("library", lib.getFileName().toString());
                p.setProperty("symbols", prefixes.get(i));
                p.setProperty("sha256", hash);
                p.setProperty("crc32c", crc);
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

    /**
     * The CRC-32C of a library's bytes, which a hit checks before loading it: it catches a library damaged on disk
     * as the SHA-256 would (the metas and libraries are written by this daemon alone, so there is no adversary to
     * out-compute), at a few microseconds where a SHA-256 not yet compiled by the JIT costs hundreds.
     */
    static String crc32cOf(byte[] bytes) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes);
        return bytes.length + ":" + Long.toHexString(crc.getValue());
    }

    static String sha256Of(byte[] bytes) {
        return HexFormat.of().formatHex(sha256().digest(bytes));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
