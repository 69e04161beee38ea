package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;
import dev.arrayd.devices.api.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Native source that could make gcc read other files, or change its flags, is refused naming the line. */
class NativeSourceCheckTest {

    private static void refused(String source, int line, String mention) {
        ArraydException e = assertThrows(ArraydException.class, () -> NativeSourceCheck.check(source), source);
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().startsWith("source line " + line + ": "), e::getMessage);
        assertTrue(e.getMessage().contains(mention), e::getMessage);
    }

    @Test
    void allowlistedHeadersAndOrdinaryCodePass() {
        NativeSourceCheck.check("""
                #include <stdint.h>
                #include <math.h>
                #  include   < float.h >
                #include <limits.h> // the largest int
                #include <stdbool.h>
                #define SQ(x) ((x) * (x))
                #if defined(SQ) && 1
                /* a comment with #include "x" and asm inside */
                static const char *s = "#include <stdio.h> asm _Pragma";
                #endif
                ARRAYD_KERNEL void k(ARRAYD_ITEM, float *x) { x[0] = SQ(2.0f) + 1e5f + 0x1p3f; }
                """);
    }

    @Test
    void otherIncludesAreRefused() {
        refused("int a;\n#include <stdio.h>\n", 2, "<stdio.h>");
        refused("#include \"kernel.c\"\n", 1, "no quoted");
        refused("#include_next <math.h>\n", 1, "#include_next");
        refused("#import <math.h>\n", 1, "#import");
        refused("#embed \"data.bin\"\n", 1, "#embed");
        refused("#define H <stdio.h>\n#include H\n", 2, "macro-computed");
    }

    @Test
    void filesOutsideAreRefusedByName() {
        refused("#include \"/etc/passwd\"\n", 1, "pulls in a file outside");
        refused("#include <../../etc/passwd>\n", 1, "pulls in a file outside");
        refused("#include </dev/zero>\n", 1, "pulls in a file outside");
        refused("#include \"/proc/self/environ\"\n", 1, "pulls in a file outside");
        refused("#line 1 \"/etc/shadow\"\n", 1, "#line");
    }

    @Test
    void disguisedDirectivesAreStillSeen() {
        refused("int a;\n#inc\\\nlude <stdio.h>\n", 2, "<stdio.h>");            // a continuation inside the name
        refused("#/* hidden */include \"x.h\"\n", 1, "no quoted");             // a comment between # and include
        refused("%:include <stdio.h>\n", 1, "<stdio.h>");                       // digraph #
        refused("??=include <stdio.h>\n", 1, "trigraph");                       // trigraph #
        refused("/* a\n comment */ #include <stdio.h>\n", 2, "<stdio.h>");      // after a block comment
        refused("#pragma GCC dependency \"/etc/passwd\"\n", 1, "#pragma");
        refused("#pragma GCC optimize(\"O0\")\n", 1, "#pragma");
    }

    @Test
    void fileReadingBuiltinsAreRefused() {
        refused("__asm__(\".incbin \\\"/etc/passwd\\\"\");\n", 1, "__asm__");
        refused("int x;\nasm(\"nop\");\n", 2, "asm");
        refused("_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", 1, "_Pragma");
        refused("#if __has_include(</etc/passwd>)\n#endif\n", 1, "__has_include");
        refused("#define P(a, b) a ## b\n", 1, "token pasting");
        refused("#define P(a, b) a %:%: b\n", 1, "token pasting");
    }

    @Test
    void theBackendRefusesBeforeGccRuns() {
        CpuBackend backend = new CpuBackend(CpuOptions.defaults());
        try {
            ArraydException e = assertThrows(ArraydException.class, () -> backend.compiler().compile(
                    new dev.arrayd.devices.api.KernelSource(dev.arrayd.devices.api.Dialect.C,
                            "#include \"/etc/passwd\"\n", List.of(new dev.arrayd.devices.api.KernelSignature("k", List.of())))));
            assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        } finally {
            backend.close();
        }
    }
}
