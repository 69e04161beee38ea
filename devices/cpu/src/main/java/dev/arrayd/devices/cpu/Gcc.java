package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One gcc command run the way the CPU backend needs it: in a private directory, with a C locale and no input,
 * bounded by the compile timeout, its output kept up to {@link #DIAGNOSTICS_LIMIT} bytes.
 *
 * @param gcc     the gcc command
 * @param timeout how long one run may take
 */
record Gcc(String gcc, Duration timeout) {

    /** Bytes of gcc's output kept (as a failure's diagnostics or a module's warnings). */
    static final int DIAGNOSTICS_LIMIT = 64 * 1024;
    /** What gcc prints when it fails on its own bug, not the source's. */
    static final String INTERNAL_ERROR = "internal compiler error";
    /** Characters of gcc's output quoted in the error of a unit it fails on internally at every level. */
    private static final int QUOTED = 2_000;

    /** A new private directory (0700) for one run's files: another local user cannot swap what gcc reads or what is loaded. */
    static Path workDir() {
        try {
            return Files.createTempDirectory("arrayd-cpu-kernel-");
        } catch (IOException e) {
            throw new ArraydException(ErrorCode.INTERNAL, "cannot create a directory for gcc: " + e.getMessage(), e);
        }
    }

    /** Writes {@code text} to {@code file} (UTF-8), INTERNAL when it cannot. */
    static void write(Path file, String text) {
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ArraydException(ErrorCode.INTERNAL, "cannot write " + file + " for gcc: " + e.getMessage(), e);
        }
    }

    /**
     * Runs gcc in {@code dir} on {@code inputs} (written there) with {@code flags}, linking {@code libkernel.so};
     * returns its output (warnings), or throws: {@link CompileException} with the output when gcc fails,
     * DEADLINE_EXCEEDED past the timeout (gcc and its children killed), CANCELLED when interrupted,
     * UNAVAILABLE when gcc cannot be run.
     *
     * <p>When gcc fails on a bug of its own at {@code -O3} (an internal compiler error: GCC 12.2 meets one in
     * its loop vectorizer on some kernels) the unit is compiled again at {@code -O2}, and the output of both runs
     * is returned as warnings; failing internally at {@code -O2} too is INTERNAL (the source is not at fault).
     */
    String run(Path dir, List<String> inputs, List<String> flags) {
        try {
            return runOnce(dir, inputs, flags);
        } catch (CompileException e) {
            if (!e.diagnostics().contains(INTERNAL_ERROR) || !flags.contains("-O3")) {
                throw e;
            }
            List<String> lower = new ArrayList<>(flags);
            lower.set(lower.indexOf("-O3"), "-O2");
            String retried;
            try {
                retried = runOnce(dir, inputs, lower);
            } catch (CompileException again) {
                if (!again.diagnostics().contains(INTERNAL_ERROR)) {
                    throw again;
                }
                String out = again.diagnostics();
                throw new ArraydException(ErrorCode.INTERNAL, "gcc failed on a bug of its own at -O3 and at -O2 (an "
                        + INTERNAL_ERROR + ", not an error in the source):\n"
                        + (out.length() > QUOTED ? out.substring(0, QUOTED) + "\n[...]" : out), again);
            }
            return "gcc failed on a bug of its own at -O3 (an " + INTERNAL_ERROR + "); this module is compiled at -O2:\n"
                    + e.diagnostics() + (retried.isBlank() ? "" : "\n" + retried);
        }
    }

    private String runOnce(Path dir, List<String> inputs, List<String> flags) {
        Path log = dir.resolve("gcc.log");
        List<String> command = new ArrayList<>();
        command.add(gcc);
        command.addAll(flags);
        command.addAll(List.of("-o", "libkernel.so"));
        command.addAll(inputs);
        command.add("-lm");
        Process process;
        try {
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            builder.environment().put("LC_ALL", "C");
            process = builder.start();
        } catch (IOException e) {
            throw new ArraydException(ErrorCode.UNAVAILABLE, "cannot run \"" + gcc + "\": " + e.getMessage(), e);
        }
        boolean finished;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw new ArraydException(ErrorCode.CANCELLED, "interrupted while gcc was compiling", e);
        }
        if (!finished) {
            kill(process);
            throw new ArraydException(ErrorCode.DEADLINE_EXCEEDED,
                    "gcc: still compiling after " + timeout.toMillis() + " ms (expected: within the compile timeout "
                            + timeout + ")");
        }
        String output = readLimited(log);
        if (process.exitValue() != 0) {
            throw new CompileException("gcc exited with " + process.exitValue(), output);
        }
        return output;
    }

    private static void kill(Process process) {
        // gcc runs cc1, as and ld as children; they would outlive a killed driver
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The first {@link #DIAGNOSTICS_LIMIT} bytes of {@code log}, marked when cut; empty when it cannot be read. */
    static String readLimited(Path log) {
        try (InputStream in = Files.newInputStream(log)) {
            byte[] bytes = in.readNBytes(DIAGNOSTICS_LIMIT + 1);
            if (bytes.length > DIAGNOSTICS_LIMIT) {
                return new String(bytes, 0, DIAGNOSTICS_LIMIT, StandardCharsets.UTF_8)
                        + "\n[gcc output truncated at " + DIAGNOSTICS_LIMIT + " bytes]";
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
