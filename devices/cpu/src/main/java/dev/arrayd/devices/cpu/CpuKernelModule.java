package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.Kernel;
import dev.arrayd.devices.api.KernelModule;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A loaded shared library. Unloading while a launch runs its code would crash the process, so
 * launches hold the module ({@link #acquire()} / {@link #release()}) and {@link #close()} only marks
 * it closed; the library is unloaded (its arena closed, its directory deleted) when the last holder
 * lets go. Launches after close are refused.
 */
final class CpuKernelModule implements KernelModule {

    private static final int CLOSED = 1 << 30;

    private final Arena arena;
    private final Path directory;
    private final String diagnostics;
    private final boolean cacheHit;
    private final Path library;
    private final AtomicInteger state = new AtomicInteger(); // launches in flight, | CLOSED once closed
    private volatile List<Kernel> kernels = List.of();

    /**
     * @param directory deleted when the module is unloaded (a build outside the cache), or null (the
     *                  library belongs to the compile cache and stays)
     */
    CpuKernelModule(Arena arena, Path directory, String diagnostics, boolean cacheHit, Path library) {
        this.arena = arena;
        this.directory = directory;
        this.diagnostics = diagnostics;
        this.cacheHit = cacheHit;
        this.library = library;
    }

    @Override
    public boolean cacheHit() {
        return cacheHit;
    }

    /** The loaded shared library's file. */
    Path library() {
        return library;
    }

    void setKernels(List<Kernel> kernels) {
        this.kernels = List.copyOf(kernels);
    }

    @Override
    public List<Kernel> kernels() {
        return kernels;
    }

    @Override
    public String diagnostics() {
        return diagnostics;
    }

    /** False once closed. */
    boolean acquire() {
        for (;;) {
            int s = state.get();
            if ((s & CLOSED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    void release() {
        if (state.decrementAndGet() == CLOSED) {
            unload();
        }
    }

    /** Where gcc ran when the module owns it (gone once the module is unloaded); null for a cached library. */
    Path directory() {
        return directory;
    }

    boolean isClosed() {
        return (state.get() & CLOSED) != 0;
    }

    @Override
    public void close() {
        int before = state.getAndUpdate(s -> s | CLOSED);
        if (before == 0) {
            unload();
        }
    }

    private void unload() {
        arena.close();
        deleteRecursively(directory);
    }

    static void deleteRecursively(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // a leftover temp file is harmless; the next reboot's tmp cleanup gets it
                }
            });
        } catch (IOException ignored) {
            // as above
        }
    }
}
