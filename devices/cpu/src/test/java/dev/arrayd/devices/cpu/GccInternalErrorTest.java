package dev.arrayd.devices.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.CompileException;
import dev.arrayd.devices.api.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gcc failing on a bug of its own (an internal compiler error) is not the source's fault: the unit is compiled
 * again at -O2, and only a second internal failure is an error, INTERNAL. A stand-in for gcc (a script that fails
 * as told for each optimization level and logs its arguments) makes this independent of the installed gcc.
 */
class GccInternalErrorTest {

    @TempDir
    Path tmp;

    /** A gcc stand-in: for each level, how it ends ("ok", "ice" or "error"); it logs each run's level to runs.log. */
    private Gcc fake(String atO3, String atO2) throws IOException {
        Path script = tmp.resolve("fake-gcc");
        Files.writeString(script, """
                #!/bin/sh
                level=none
                for a in "$@"; do case "$a" in -O*) level="$a";; esac; done
                echo "$level" >> "%s"
                case "$level" in -O3) how=%s;; -O2) how=%s;; *) how=error;; esac
                case "$how" in
                  ok) echo "a warning at $level"; : > libkernel.so; exit 0;;
                  ice) echo "unit.c:3:1: internal compiler error: in finalize, at vector-builder.h:513"; exit 1;;
                  *) echo "unit.c:3:1: error: expected ';' before '}' token"; exit 1;;
                esac
                """.formatted(tmp.resolve("runs.log"), atO3, atO2));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return new Gcc(script.toString(), Duration.ofSeconds(30));
    }

    private Path work() throws IOException {
        return Files.createDirectories(tmp.resolve("work"));
    }

    private List<String> runs() throws IOException {
        return Files.readAllLines(tmp.resolve("runs.log"));
    }

    private static final List<String> FLAGS = List.of("-O3", "-shared", "-fPIC");

    @Test
    void anInternalErrorAtO3IsCompiledAgainAtO2AndSaysSoInItsWarnings() throws IOException {
        Gcc gcc = fake("ice", "ok");
        String warnings = gcc.run(work(), List.of("unit.c"), FLAGS);
        assertEquals(List.of("-O3", "-O2"), runs());
        assertTrue(warnings.startsWith("gcc failed on a bug of its own at -O3"), warnings);
        assertTrue(warnings.contains("internal compiler error: in finalize"), warnings);
        assertTrue(warnings.contains("a warning at -O2"), warnings);
    }

    @Test
    void anInternalErrorAtBothLevelsIsInternalNotTheSourcesFault() throws IOException {
        Gcc gcc = fake("ice", "ice");
        ArraydException e = assertThrows(ArraydException.class, () -> gcc.run(work(), List.of("unit.c"), FLAGS));
        assertEquals(ErrorCode.INTERNAL, e.code());
        assertTrue(e.getMessage().contains("at -O3 and at -O2"), e.getMessage());
        assertEquals(List.of("-O3", "-O2"), runs());
    }

    @Test
    void anErrorInTheSourceIsNotCompiledAgain() throws IOException {
        Gcc gcc = fake("error", "ok");
        CompileException e = assertThrows(CompileException.class, () -> gcc.run(work(), List.of("unit.c"), FLAGS));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.diagnostics().contains("expected ';'"), e.diagnostics());
        assertEquals(List.of("-O3"), runs());
    }

    @Test
    void anErrorInTheSourceAtO2AfterAnInternalOneAtO3IsTheSourcesError() throws IOException {
        Gcc gcc = fake("ice", "error");
        CompileException e = assertThrows(CompileException.class, () -> gcc.run(work(), List.of("unit.c"), FLAGS));
        assertTrue(e.diagnostics().contains("expected ';'"), e.diagnostics());
        assertEquals(List.of("-O3", "-O2"), runs());
    }
}
