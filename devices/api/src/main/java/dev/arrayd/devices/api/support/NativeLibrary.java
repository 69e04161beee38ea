package dev.arrayd.devices.api.support;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Whether a native library loads, asked through FFM before a backend touches the Java binding that needs
 * it: JOCL and JCuda load their JNI part in a static initializer that links against the library, and a
 * failed class initialization is a {@code NoClassDefFoundError} for the rest of the process. So a backend
 * asks here first and never names those classes when this says no.
 */
public final class NativeLibrary {

    /** What a probe found. */
    public enum Probe {
        /** The library loads and exports the symbol. */
        LOADS,
        /** The library does not load (not installed, or not on the loader's path). */
        NOT_FOUND,
        /** The library loads but does not export the symbol (another library of that name). */
        NO_SYMBOL
    }

    private NativeLibrary() {}

    /** Loads {@code library} in a throwaway arena and looks {@code symbol} up. */
    public static Probe probe(String library, String symbol) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
            return lookup.find(symbol).isPresent() ? Probe.LOADS : Probe.NO_SYMBOL;
        } catch (IllegalArgumentException | IllegalCallerException | UnsupportedOperationException e) {
            return Probe.NOT_FOUND;
        }
    }
}
