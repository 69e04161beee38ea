package dev.arrayd.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Renders the chart's templates the way {@code helm template} does, for the small subset of Helm's
 * template language the chart uses; helm itself cannot be installed on the build machines. Anything
 * outside the subset fails loudly instead of rendering something helm would not:
 *
 * <ul>
 *   <li>{@code {{ .Values.a.b }}}, {@code {{ .Release.Name }}}, {@code {{ .Release.Namespace }}},
 *       {@code {{ .Chart.Name }}}, {@code .Chart.Version}, {@code .Chart.AppVersion};</li>
 *   <li>pipes and calls of {@code quote}, {@code default X}, {@code toYaml}, {@code nindent N},
 *       {@code indent N};</li>
 *   <li>{@code if} / {@code else} / {@code end}, with Go template truthiness;</li>
 *   <li>{@code {{-} and {@code -}}} whitespace trimming, {@code {{/* comments *\/}}}.</li>
 * </ul>
 *
 * Stricter than helm where helm is silently wrong: a value path that does not exist is an error (helm
 * prints nothing), a map printed without toYaml is an error (helm prints {@code map[...]}), and a number
 * of 1e6 or more is an error (helm prints {@code 1e+06}: quote such values).
 */
final class MiniHelm {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .enable(YAMLGenerator.Feature.ALWAYS_QUOTE_NUMBERS_AS_STRINGS));

    private MiniHelm() {}

    /** One rendered template file: its name under templates/ and its YAML documents. */
    record Rendered(String template, String text) {
        /** The non-empty YAML documents of this file. */
        List<String> documents() {
            List<String> docs = new ArrayList<>();
            for (String doc : text.split("(?m)^---\\s*$")) {
                boolean content = doc.lines().map(String::strip).anyMatch(l -> !l.isEmpty() && !l.startsWith("#"));
                if (content) {
                    docs.add(doc);
                }
            }
            return docs;
        }
    }

    /** Renders every template of {@code chartDir} with its values.yaml deep-merged with {@code overrides}. */
    static List<Rendered> render(Path chartDir, String releaseName, String namespace, Map<String, Object> overrides) {
        Map<String, Object> chart = readYaml(chartDir.resolve("Chart.yaml"));
        Map<String, Object> values = merge(readYaml(chartDir.resolve("values.yaml")), overrides);
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("Values", values);
        root.put("Release", Map.of("Name", releaseName, "Namespace", namespace, "Service", "Helm"));
        root.put("Chart", Map.of("Name", chart.get("name"), "Version", chart.get("version"), "AppVersion",
                chart.get("appVersion")));
        List<Rendered> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(chartDir.resolve("templates"))) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith("_") || name.equals("NOTES.txt")) {
                    continue;
                }
                String source = Files.readString(f);
                try {
                    out.add(new Rendered(name, renderText(source, root)));
                } catch (RuntimeException e) {
                    throw new IllegalStateException("templates/" + name + ": " + e.getMessage(), e);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> readYaml(Path file) {
        try {
            Map<String, Object> m = YAML.readValue(file.toFile(), Map.class);
            return m == null ? new LinkedHashMap<>() : m;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Helm's values merge: maps merge key by key, anything else is replaced. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> overrides) {
        Map<String, Object> out = new LinkedHashMap<>(base);
        overrides.forEach((k, v) -> {
            if (v instanceof Map<?, ?> vm && out.get(k) instanceof Map<?, ?> bm) {
                out.put(k, merge((Map<String, Object>) bm, (Map<String, Object>) vm));
            } else {
                out.put(k, v);
            }
        });
        return out;
    }

    // ---- parsing: text and actions into a tree of nodes ----

    private sealed interface Node permits Text, Action, If {}

    private record Text(String text) implements Node {}

    private record Action(String expr) implements Node {}

    private record If(String condition, List<Node> then, List<Node> otherwise) implements Node {}

    /** A raw piece of the template: text, or an action with its trim markers already applied to the text. */
    private record Piece(boolean action, String body) {}

    static String renderText(String source, Map<String, Object> root) {
        List<Piece> pieces = lex(source);
        int[] pos = {0};
        List<Node> nodes = parse(pieces, pos, false);
        if (pos[0] != pieces.size()) {
            throw new IllegalArgumentException("unexpected {{ " + pieces.get(pos[0]).body() + " }}");
        }
        StringBuilder out = new StringBuilder();
        exec(nodes, root, out);
        return out.toString();
    }

    private static List<Piece> lex(String s) {
        List<Piece> pieces = new ArrayList<>();
        int i = 0;
        boolean trimNextText = false;
        while (i < s.length()) {
            int open = s.indexOf("{{", i);
            String text = open < 0 ? s.substring(i) : s.substring(i, open);
            if (trimNextText) {
                text = text.stripLeading();
            }
            if (open < 0) {
                pieces.add(new Piece(false, text));
                break;
            }
            int close = s.indexOf("}}", open);
            if (close < 0) {
                throw new IllegalArgumentException("unclosed {{ at offset " + open);
            }
            String inner = s.substring(open + 2, close);
            boolean trimLeft = inner.startsWith("- ") || inner.equals("-");
            boolean trimRight = inner.endsWith(" -");
            if (trimLeft) {
                text = text.stripTrailing();
                inner = inner.substring(1);
            }
            if (trimRight) {
                inner = inner.substring(0, inner.length() - 1);
            }
            pieces.add(new Piece(false, text));
            inner = inner.strip();
            if (!(inner.startsWith("/*") && inner.endsWith("*/"))) {
                pieces.add(new Piece(true, inner));
            }
            trimNextText = trimRight;
            i = close + 2;
        }
        return pieces;
    }

    private static List<Node> parse(List<Piece> pieces, int[] pos, boolean inIf) {
        List<Node> nodes = new ArrayList<>();
        while (pos[0] < pieces.size()) {
            Piece p = pieces.get(pos[0]);
            if (!p.action()) {
                nodes.add(new Text(p.body()));
                pos[0]++;
                continue;
            }
            String body = p.body();
            if (body.equals("end") || body.equals("else")) {
                if (!inIf) {
                    throw new IllegalArgumentException("{{ " + body + " }} without {{ if }}");
                }
                return nodes;
            }
            pos[0]++;
            if (body.startsWith("if ")) {
                List<Node> then = parse(pieces, pos, true);
                List<Node> otherwise = List.of();
                if (pos[0] < pieces.size() && pieces.get(pos[0]).body().equals("else")) {
                    pos[0]++;
                    otherwise = parse(pieces, pos, true);
                }
                if (pos[0] >= pieces.size() || !pieces.get(pos[0]).body().equals("end")) {
                    throw new IllegalArgumentException("{{ " + body + " }} without {{ end }}");
                }
                pos[0]++;
                nodes.add(new If(body.substring(3).strip(), then, otherwise));
            } else if (body.matches("(range|with|define|template|include|block|tpl)\\b.*")) {
                throw new UnsupportedOperationException("{{ " + body + " }}: not in the subset MiniHelm renders");
            } else {
                nodes.add(new Action(body));
            }
        }
        if (inIf) {
            throw new IllegalArgumentException("missing {{ end }}");
        }
        return nodes;
    }

    private static void exec(List<Node> nodes, Map<String, Object> root, StringBuilder out) {
        for (Node n : nodes) {
            switch (n) {
                case Text t -> out.append(t.text());
                case Action a -> out.append(print(pipeline(a.expr(), root)));
                case If i -> exec(truthy(pipeline(i.condition(), root)) ? i.then() : i.otherwise(), root, out);
            }
        }
    }

    // ---- expressions ----

    private static Object pipeline(String expr, Map<String, Object> root) {
        Object value = null;
        boolean first = true;
        for (String command : splitOutsideQuotes(expr, '|')) {
            List<String> words = words(command.strip());
            if (words.isEmpty()) {
                throw new IllegalArgumentException("empty command in {{ " + expr + " }}");
            }
            List<Object> args = new ArrayList<>();
            String head = words.getFirst();
            boolean function = !head.startsWith(".") && !head.startsWith("\"") && !isNumber(head);
            for (String w : function ? words.subList(1, words.size()) : words) {
                args.add(term(w, root));
            }
            if (!first) {
                args.add(value);
            }
            if (function) {
                value = call(head, args);
            } else if (args.size() == 1) {
                value = args.getFirst();
            } else {
                throw new IllegalArgumentException("cannot apply " + words + " in {{ " + expr + " }}");
            }
            first = false;
        }
        return value;
    }

    private static Object call(String function, List<Object> args) {
        return switch (function) {
            case "quote" -> {
                arity(function, args, 1);
                Object v = args.getFirst();
                yield "\"" + (v == null ? "" : print(v).replace("\\", "\\\\").replace("\"", "\\\"")) + "\"";
            }
            case "default" -> {
                arity(function, args, 2);
                yield truthy(args.get(1)) ? args.get(1) : args.get(0);
            }
            case "toYaml" -> {
                arity(function, args, 1);
                try {
                    yield YAML.writeValueAsString(args.getFirst()).stripTrailing();
                } catch (JsonProcessingException e) {
                    throw new IllegalArgumentException(e);
                }
            }
            case "nindent", "indent" -> {
                arity(function, args, 2);
                String pad = " ".repeat(((Number) args.get(0)).intValue());
                String indented = String.join("\n", print(args.get(1)).lines().map(l -> pad + l).toList());
                yield function.equals("nindent") ? "\n" + indented : indented;
            }
            default -> throw new UnsupportedOperationException(function + ": not in the subset MiniHelm renders");
        };
    }

    private static void arity(String function, List<Object> args, int n) {
        if (args.size() != n) {
            throw new IllegalArgumentException(function + " takes " + n + " arguments, got " + args.size());
        }
    }

    private static Object term(String word, Map<String, Object> root) {
        if (word.startsWith("\"")) {
            return word.substring(1, word.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        if (isNumber(word)) {
            return Integer.parseInt(word);
        }
        if (word.equals("true") || word.equals("false")) {
            return Boolean.parseBoolean(word);
        }
        if (!word.startsWith(".")) {
            throw new IllegalArgumentException("\"" + word + "\": not a value MiniHelm knows");
        }
        Object v = root;
        StringBuilder walked = new StringBuilder();
        for (String part : word.substring(1).split("\\.")) {
            walked.append('.').append(part);
            if (!(v instanceof Map<?, ?> m) || !m.containsKey(part)) {
                throw new IllegalArgumentException(walked + ": no such value (helm would print nothing)");
            }
            v = m.get(part);
        }
        return v;
    }

    private static boolean isNumber(String w) {
        return w.matches("-?\\d+");
    }

    /** Go template truthiness: false, 0, "", nil and empty collections are false. */
    static boolean truthy(Object v) {
        return switch (v) {
            case null -> false;
            case Boolean b -> b;
            case Number n -> n.doubleValue() != 0;
            case String s -> !s.isEmpty();
            case Map<?, ?> m -> !m.isEmpty();
            case Collection<?> c -> !c.isEmpty();
            default -> true;
        };
    }

    /** How {{ value }} prints; refuses what helm would print wrongly. */
    static String print(Object v) {
        return switch (v) {
            case null -> "";
            case String s -> s;
            case Boolean b -> b.toString();
            case Number n -> {
                double d = n.doubleValue();
                if (Math.abs(d) >= 1e6) {
                    throw new IllegalArgumentException(n + ": helm prints numbers of 1e6 or more as 1e+06; quote it");
                }
                yield d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
            }
            case Map<?, ?> m -> throw new IllegalArgumentException("a map printed without toYaml: " + new TreeMap<>(m));
            case Collection<?> c -> throw new IllegalArgumentException("a list printed without toYaml: " + c);
            default -> v.toString();
        };
    }

    private static List<String> splitOutsideQuotes(String s, char sep) {
        List<String> parts = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' && (i == 0 || s.charAt(i - 1) != '\\')) {
                quoted = !quoted;
            }
            if (c == sep && !quoted) {
                parts.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        parts.add(cur.toString());
        return parts;
    }

    private static List<String> words(String s) {
        List<String> words = new ArrayList<>();
        for (String w : splitOutsideQuotes(s, ' ')) {
            if (!w.isBlank()) {
                words.add(w.strip());
            }
        }
        return words;
    }
}
