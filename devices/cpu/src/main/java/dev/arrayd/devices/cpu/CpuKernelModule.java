package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.RefCountedModule;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A loaded shared library: unloaded (its arena closed, its directory deleted) when the module is closed
 * and the last launch holding it lets go ({@link RefCountedModule}).
 */
final class CpuKernelModule extends RefCountedModule {

    private final Arena arena;
    private final Path directory;
    private final boolean cacheHit;
    private final Path library;

    /**
     * @param directory deleted when the module is unloaded (a build outside the cache), or null (the
     *                  library belongs to the compile cache and stays)
     */
    CpuKernelModule(Arena arena, Path directory, String diagnostics, boolean cacheHit, Path library) {
        super(diagnostics);
        this.arena = arena;
        this.directory = directory;
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

    /** Where gcc ran when the module owns it (gone once the module is unloaded); null for a cached library. */
    Path directory() {
        return directory;
    }

    @Override
    protected void unload() {
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
