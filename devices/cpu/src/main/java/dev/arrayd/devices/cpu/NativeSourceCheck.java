package dev.arrayd.devices.cpu;

import dev.arrayd.devices.api.ArraydException;

import dev.arrayd.devices.api.Quote;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Refuses native C source that could make gcc read files other than the allowlisted standard headers
 * or change how it compiles, before gcc sees it. A native kernel is trusted to run (that is what
 * {@code --allow-native-source} means), but compiling it must not disclose the daemon's files through
 * diagnostics or embed them in a library.
 *
 * <p>The source is read the way the C preprocessor reads it: trigraphs refused outright (gnu11 ignores
 * them; refusing keeps what we check and what gcc sees the same), backslash-newline continuations
 * spliced (so {@code #inc\<newline>lude} is an include), comments replaced by a space (so
 * {@code #/**}{@code /include} is too), digraph {@code %:} read as {@code #}. Then:
 * <ul>
 *   <li>{@code #include} only as {@code #include <h>} for h in {@link #HEADERS}: no quoted or computed
 *       includes, no paths ({@code /}, {@code ..}: a file outside is refused by name);</li>
 *   <li>directives other than conditionals, {@code define}/{@code undef}, {@code error}/{@code warning}
 *       are refused: {@code include_next}, {@code import}, {@code embed}, {@code line} (gcc would quote
 *       the named file in diagnostics), {@code pragma} ({@code GCC dependency} reads a file,
 *       {@code GCC optimize} changes flags), {@code ident}, {@code assert};</li>
 *   <li>the identifiers {@code asm} / {@code __asm} / {@code __asm__} ({@code .incbin} reads a file),
 *       {@code _Pragma}, {@code __has_include}, {@code __has_include_next}, {@code __has_embed}, and token
 *       pasting ({@code ##}, which could assemble any of them) are refused outside literals.</li>
 * </ul>
 * Every refusal is INVALID_ARGUMENT naming the user's line.
 */
final class NativeSourceCheck {

    /** Headers a native kernel may include; the backend's header already includes the first four. */
    static final List<String> HEADERS = List.of("stdint.h", "stddef.h", "math.h", "string.h", "float.h", "limits.h",
            "stdbool.h");

    private static final Set<String> DIRECTIVES = Set.of("", "define", "undef", "if", "ifdef", "ifndef", "elif",
            "elifdef", "elifndef", "else", "endif", "error", "warning", "include");

    private static final Set<String> FORBIDDEN_IDENTIFIERS = Set.of("asm", "__asm", "__asm__", "_Pragma",
            "__has_include", "__has_include_next", "__has_embed", "__has_include__");

    private static final Pattern ALLOWED_INCLUDE = Pattern.compile("<\\s*([A-Za-z0-9_.]+)\\s*>");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern TRIGRAPH = Pattern.compile("\\?\\?[=/'()!<>\\-]");

    private NativeSourceCheck() {}

    /** A logical line: spliced, comments blanked; {@code bare} also has literal contents blanked. */
    private record Logical(int line, String code, String bare) {}

    /** @throws ArraydException INVALID_ARGUMENT naming the first offending line */
    static void check(String source) {
        String[] physical = source.split("\r?\n", -1);
        for (int i = 0; i < physical.length; i++) {
            if (TRIGRAPH.matcher(physical[i]).find()) {
                throw refuse(i + 1, "a trigraph (" + Quote.string(physical[i].strip()) + ")", "no trigraphs");
            }
            if (physical[i].indexOf('\0') >= 0) {
                throw refuse(i + 1, "a NUL character", "text");
            }
        }
        for (Logical l : logicalLines(physical)) {
            String t = l.bare().strip();
            String rest = null;
            if (t.startsWith("#")) {
                rest = t.substring(1);
            } else if (t.startsWith("%:")) {
                rest = t.substring(2);
            }
            if (rest != null) {
                directive(l, rest.strip());
            }
            identifiers(l);
        }
    }

    private static void directive(Logical l, String rest) {
        Matcher m = IDENTIFIER.matcher(rest);
        String name = m.lookingAt() ? m.group() : "";
        if (name.isEmpty() && !rest.isEmpty()) {
            throw refuse(l.line(), "the directive " + Quote.string("#" + rest), "a known preprocessor directive");
        }
        if (!DIRECTIVES.contains(name)) {
            throw refuse(l.line(), Quote.string("#" + name), "only #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif,"
                    + " #error, #warning and #include <standard header> in native kernels");
        }
        if (!name.equals("include")) {
            return;
        }
        // the operand from the text with literals intact: "<x.h>" is not a literal, "\"x.h\"" is
        String code = l.code().strip();
        int at = code.indexOf("include");
        String operand = code.substring(at + "include".length()).strip();
        Matcher h = ALLOWED_INCLUDE.matcher(operand);
        if (h.matches() && HEADERS.contains(h.group(1))) {
            return;
        }
        String target = operand.length() >= 2 ? operand.substring(1, operand.length() - 1).strip() : operand;
        if (target.startsWith("/") || target.contains("..") || target.contains("/")) {
            throw refuse(l.line(), Quote.string("#include " + operand) + " pulls in a file outside the kernel",
                    "only #include <h> for h in " + HEADERS);
        }
        throw refuse(l.line(), Quote.string("#include " + operand), "only #include <h> for h in " + HEADERS
                + "; no quoted or macro-computed includes");
    }

    private static void identifiers(Logical l) {
        String bare = l.bare();
        if (bare.contains("##") || bare.contains("%:%:")) {
            throw refuse(l.line(), "token pasting (##)", "no token pasting in native kernels: it can assemble"
                    + " names that are refused (asm, _Pragma, __has_include)");
        }
        Matcher m = IDENTIFIER.matcher(bare);
        while (m.find()) {
            // skip the tails of numbers such as 1e5f or 0x1p3
            if (m.start() > 0 && (Character.isLetterOrDigit(bare.charAt(m.start() - 1)) || bare.charAt(m.start() - 1) == '.')) {
                continue;
            }
            if (FORBIDDEN_IDENTIFIERS.contains(m.group())) {
                throw refuse(l.line(), Quote.string(m.group()), "no inline assembly, _Pragma or __has_include in native kernels:"
                        + " they can read files or change compiler flags");
            }
        }
    }

    private static ArraydException refuse(int line, String what, String expected) {
        return ArraydException.invalid("source line " + line + ": " + what + " (expected: " + expected + ")");
    }

    /** Splices continuations and blanks comments (across lines), tracking each logical line's first physical line. */
    private static List<Logical> logicalLines(String[] physical) {
        List<Logical> out = new ArrayList<>();
        boolean inBlockComment = false;
        int i = 0;
        while (i < physical.length) {
            int first = i + 1;
            StringBuilder raw = new StringBuilder();
            for (;;) {
                String p = physical[i++];
                String trimmed = p.stripTrailing();
                // gcc also splices a backslash followed by spaces (with a warning)
                if (trimmed.endsWith("\\") && i < physical.length) {
                    raw.append(trimmed, 0, trimmed.length() - 1);
                    continue;
                }
                raw.append(p);
                break;
            }
            StringBuilder code = new StringBuilder(raw.length());
            StringBuilder bare = new StringBuilder(raw.length());
            int n = raw.length();
            int j = 0;
            while (j < n) {
                char c = raw.charAt(j);
                if (inBlockComment) {
                    if (c == '*' && j + 1 < n && raw.charAt(j + 1) == '/') {
                        inBlockComment = false;
                        code.append(' ');
                        bare.append(' ');
                        j += 2;
                    } else {
                        j++;
                    }
                    continue;
                }
                if (c == '/' && j + 1 < n && raw.charAt(j + 1) == '*') {
                    inBlockComment = true;
                    j += 2;
                    continue;
                }
                if (c == '/' && j + 1 < n && raw.charAt(j + 1) == '/') {
                    break;
                }
                if (c == '"' || c == '\'') {
                    int end = j + 1;
                    while (end < n && raw.charAt(end) != c) {
                        end += raw.charAt(end) == '\\' ? 2 : 1;
                    }
                    end = Math.min(end + 1, n);
                    code.append(raw, j, end);
                    bare.append(c).append(c);
                    j = end;
                    continue;
                }
                code.append(c);
                bare.append(c);
                j++;
            }
            out.add(new Logical(first, code.toString(), bare.toString()));
        }
        return out;
    }
}
