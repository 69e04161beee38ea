package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.support.RefCountedModule;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A module of a loaded shared library: when the module is closed and the last launch holding it lets go
 * ({@link RefCountedModule}), it lets go of the library (the compile cache's stays open a while for the next
 * hit, {@link LoadedLibraries}; a library of its own is closed and its directory deleted).
 */
final class CpuKernelModule extends RefCountedModule {

    private final Runnable unloadLibrary;
    private final Path directory;
    private final boolean cacheHit;
    private final Path library;

    /**
     * @param unloadLibrary lets go of the loaded library (a reference to the shared one of the compile cache, or
     *                      the module's own arena)
     * @param directory     deleted when the module is unloaded (a build outside the cache), or null (the library
     *                      belongs to the compile cache and stays)
     */
    CpuKernelModule(Runnable unloadLibrary, String diagnostics, boolean cacheHit, Path library, Path directory) {
        super(diagnostics);
        this.unloadLibrary = unloadLibrary;
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
        unloadLibrary.run();
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
