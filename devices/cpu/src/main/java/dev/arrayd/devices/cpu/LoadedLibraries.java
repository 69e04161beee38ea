package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The compile cache's libraries as loaded into this process, shared by every module made from one: a cache
 * hit takes a reference to a library already open (its symbols looked up and their downcall handles made
 * once) instead of opening it again. A library nobody uses stays open among the {@link #MAX_IDLE} most
 * recently released, so that compiling, closing and compiling the same kernels costs no reload; older ones
 * are closed. Thread-safe.
 */
final class LoadedLibraries implements AutoCloseable {

    /** Libraries kept open while unused. */
    static final int MAX_IDLE = 32;

    /** One open library and its entry points' downcall handles (made on first use, then kept). */
    final class Loaded {
        private final Path path;
        private final Arena arena;
        private final SymbolLookup lookup;
        private final Map<String, MethodHandle> handles = new HashMap<>();
        private int refs;

        private Loaded(Path path) {
            this.path = path;
            this.arena = Arena.ofShared();
            try {
                this.lookup = SymbolLookup.libraryLookup(path, arena);
            } catch (RuntimeException e) {
                arena.close();
                throw e;
            }
        }

        /** The downcall handle of {@code symbol}, with the trampolines' shape. */
        MethodHandle handle(String symbol) {
            synchronized (LoadedLibraries.this) {
                MethodHandle h = handles.get(symbol);
                if (h == null) {
                    MemorySegment address = lookup.find(symbol).orElseThrow(() -> new ArraydException(ErrorCode.INTERNAL,
                            "symbol " + symbol + " missing from the compiled library " + path.getFileName()));
                    h = TrampolineCall.HANDLE.bindTo(address);
                    handles.put(symbol, h);
                }
                return h;
            }
        }

        /** Lets go of the reference a module took: the library stays open a while, among the idle ones. */
        void release() {
            LoadedLibraries.this.release(this);
        }
    }

    /**
     * The trampolines' downcall with the function's address as its first argument, made once (on first use) and
     * bound to each symbol: a library loaded from the cache costs no linker work per entry point.
     */
    private static final class TrampolineCall {
        static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(CpuKernelCompiler.TRAMPOLINE);
    }

    private final Map<Path, Loaded> open = new HashMap<>();
    private final LinkedHashMap<Path, Loaded> idle = new LinkedHashMap<>(16, 0.75f, true);
    private final int maxIdle;
    private boolean closed;

    LoadedLibraries() {
        this(MAX_IDLE);
    }

    /** @param maxIdle libraries kept open while unused */
    LoadedLibraries(int maxIdle) {
        this.maxIdle = maxIdle;
    }

    /** A reference to {@code library}, opened if it is not open already. */
    synchronized Loaded acquire(Path library) {
        if (closed) {
            throw new ArraydException(ErrorCode.FAILED_PRECONDITION, "the cpu backend is closed");
        }
        Loaded l = open.get(library);
        if (l == null) {
            l = new Loaded(library);
            open.put(library, l);
        }
        if (l.refs++ == 0) {
            idle.remove(library);
        }
        return l;
    }

    private synchronized void release(Loaded l) {
        if (--l.refs > 0) {
            return;
        }
        if (closed) {
            open.remove(l.path);
            l.arena.close();
            return;
        }
        idle.put(l.path, l);
        while (idle.size() > maxIdle) {
            Loaded eldest = idle.pollFirstEntry().getValue();
            open.remove(eldest.path);
            eldest.arena.close();
        }
    }

    /** Libraries open now, in use or idle. */
    synchronized int openCount() {
        return open.size();
    }

    /** Closes the idle libraries now and every other one when its last module lets go. */
    @Override
    public synchronized void close() {
        closed = true;
        for (Loaded l : idle.values()) {
            open.remove(l.path);
            l.arena.close();
        }
        idle.clear();
    }
}
