package dev.arrayd.devices.api.support;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.KernelParam;
import dev.arrayd.devices.api.KernelSignature;
import dev.arrayd.devices.api.Quote;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The checks of a module's declared entry points that the scheduler and every backend make alike: at
 * least one, each named by a C identifier (names become symbols in generated C, OpenCL C and CUDA C) of at
 * most {@value #MAX_NAME} characters, no name twice, and the same for each entry point's parameters.
 */
public final class EntryPoints {

    /** Longest entry point or parameter name. */
    public static final int MAX_NAME = 128;

    private EntryPoints() {}

    /** Whether {@code name} is an ASCII C identifier, {@code [A-Za-z_][A-Za-z0-9_]*}, of at most {@value #MAX_NAME} characters. */
    public static boolean isIdentifier(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
            if (!letter && (i == 0 || c < '0' || c > '9')) {
                return false;
            }
        }
        return true;
    }

    /** INVALID_ARGUMENT {@code what: "name" (expected: a C identifier)} unless {@link #isIdentifier}. */
    public static void checkIdentifier(String name, String what) {
        if (name != null && name.length() > MAX_NAME) {
            throw ArraydException.invalid(what + ": " + Quote.string(name) + " (expected: at most " + MAX_NAME + " characters)");
        }
        if (!isIdentifier(name)) {
            throw ArraydException.invalid(what + ": " + Quote.string(name) + " (expected: a C identifier)");
        }
    }

    /**
     * Checks a module's entry points.
     *
     * @param where the list's field name in messages, e.g. {@code entryPoints} or {@code modules[0].entry_points}
     */
    public static void check(List<KernelSignature> entries, String where) {
        if (entries.isEmpty()) {
            throw ArraydException.invalid(where + ": none (expected: at least one)");
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < entries.size(); i++) {
            KernelSignature sig = entries.get(i);
            String at = where + "[" + i + "]";
            checkIdentifier(sig.name(), at + ".name");
            if (!names.add(sig.name())) {
                throw ArraydException.invalid(at + ".name: " + Quote.string(sig.name()) + " (declared twice)");
            }
            Set<String> params = new HashSet<>();
            for (int p = 0; p < sig.params().size(); p++) {
                KernelParam kp = sig.params().get(p);
                checkIdentifier(kp.name(), at + ".params[" + p + "].name");
                if (!params.add(kp.name())) {
                    throw ArraydException.invalid(at + ".params[" + p + "].name: " + Quote.string(kp.name()) + " (declared twice)");
                }
            }
        }
    }
}
