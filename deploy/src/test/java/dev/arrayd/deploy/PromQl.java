package dev.arrayd.deploy;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Just enough of PromQL to find what an expression reads: metric names, label matchers and the labels
 * of by/without/on/ignoring clauses. Not a parser of the whole language; the expressions of the
 * dashboard and the alert rules keep to selectors, functions, aggregations and arithmetic.
 */
final class PromQl {

    /** One label matcher, e.g. {@code outcome=~"failed|aborted"}. */
    record Matcher(String metric, String label, String op, String value) {}

    /** What one expression reads. */
    record Refs(Set<String> metrics, List<Matcher> matchers, Set<String> groupingLabels) {}

    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on",
            "ignoring", "group_left", "group_right", "inf", "nan", "Inf", "NaN");
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)?\\s*\\{([^}]*)}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern GROUPING = Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([^,()]*(?:\\{[^}]*})?)\\s*,\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)");
    private static final Pattern IDENT = Pattern.compile("(?<![a-zA-Z0-9_:$.])([a-zA-Z_:][a-zA-Z0-9_:]*)");

    private PromQl() {}

    static Refs refs(String expr) {
        List<Matcher> matchers = new ArrayList<>();
        Set<String> grouping = new LinkedHashSet<>();
        String e = expr.replaceAll("\\[[^]]*]", " ");
        // Grafana's label_values(selector, label): the label is a grouping label, not a metric
        java.util.regex.Matcher lv = LABEL_VALUES.matcher(e);
        StringBuilder sb = new StringBuilder();
        while (lv.find()) {
            grouping.add(lv.group(2));
            lv.appendReplacement(sb, java.util.regex.Matcher.quoteReplacement(lv.group(1)));
        }
        lv.appendTail(sb);
        e = sb.toString();
        java.util.regex.Matcher sel = SELECTOR.matcher(e);
        while (sel.find()) {
            java.util.regex.Matcher m = MATCHER.matcher(sel.group(2));
            while (m.find()) {
                matchers.add(new Matcher(sel.group(1), m.group(1), m.group(2), m.group(3)));
            }
        }
        e = e.replaceAll("\\{[^}]*}", " ").replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", " ");
        java.util.regex.Matcher g = GROUPING.matcher(e);
        while (g.find()) {
            for (String l : g.group(2).split(",")) {
                if (!l.isBlank()) {
                    grouping.add(l.strip());
                }
            }
        }
        e = GROUPING.matcher(e).replaceAll(" ");
        Set<String> metrics = new LinkedHashSet<>();
        java.util.regex.Matcher id = IDENT.matcher(e);
        while (id.find()) {
            String name = id.group(1);
            String rest = e.substring(id.end()).stripLeading();
            if (KEYWORDS.contains(name) || rest.startsWith("(")) {
                continue; // a keyword or a function
            }
            if (id.start() > 0 && Character.isDigit(e.charAt(id.start() - 1))) {
                continue; // the exponent of a number such as 1e6
            }
            metrics.add(name);
        }
        return new Refs(metrics, matchers, grouping);
    }

    /** The literal alternatives of an = or =~ matcher ("a|b" gives a, b), or none when it is a real regex. */
    static List<String> literalValues(Matcher m) {
        if (!(m.op().equals("=") || m.op().equals("=~")) || m.value().contains("$")) {
            return List.of();
        }
        if (m.op().equals("=")) {
            return List.of(m.value());
        }
        return m.value().matches("[A-Za-z0-9_:.]+(\\|[A-Za-z0-9_:.]+)*") ? List.of(m.value().split("\\|")) : List.of();
    }


}
