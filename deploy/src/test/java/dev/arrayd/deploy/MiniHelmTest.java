package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The renderer follows helm's semantics for the subset it supports, and refuses the rest. */
class MiniHelmTest {

    private static final Map<String, Object> ROOT = Map.of(
            "Values", Map.of("a", Map.of("b", "x", "n", 7700, "on", true, "off", false, "empty", ""),
                    "m", Map.of("k", "v"), "l", List.of("p", "q"), "big", 1000000),
            "Release", Map.of("Name", "rel"), "Chart", Map.of("AppVersion", "9.9"));

    private static String render(String template) {
        return MiniHelm.renderText(template, ROOT);
    }

    @Test
    void valuesQuoteDefault() {
        assertEquals("x 7700 true rel", render("{{ .Values.a.b }} {{ .Values.a.n }} {{ .Values.a.on }} {{ .Release.Name }}"));
        assertEquals("\"7700\" \"\"", render("{{ .Values.a.n | quote }} {{ .Values.a.empty | quote }}"));
        assertEquals("9.9 x", render("{{ .Values.a.empty | default .Chart.AppVersion }} {{ .Values.a.b | default \"y\" }}"));
    }

    @Test
    void trimmingAndConditionals() {
        assertEquals("a:\nb", render("a:\n  {{- if .Values.a.off }}\n  no\n  {{- end }}\nb"));
        assertEquals("a:\n  yes\nb", render("a:\n  {{- if .Values.a.on }}\n  yes\n  {{- else }}\n  no\n  {{- end }}\nb"));
        assertEquals("a:\n  no\nb", render("a:\n  {{- if .Values.a.empty }}\n  yes\n  {{- else }}\n  no\n  {{- end }}\nb"));
        assertEquals("ab", render("a {{- /* a comment */ -}} b"));
    }

    @Test
    void toYamlNindent() {
        assertEquals("x:\n  k: v", render("x:\n  {{- toYaml .Values.m | nindent 2 }}"));
        assertEquals("x:\n  - p\n  - q", render("x:{{ toYaml .Values.l | nindent 2 }}"));
    }

    @Test
    void refusesWhatHelmWouldRenderWronglyOrWhatItDoesNotKnow() {
        assertThrows(IllegalArgumentException.class, () -> render("{{ .Values.a.typo }}"));
        assertThrows(IllegalArgumentException.class, () -> render("{{ .Values.m }}"));
        assertThrows(IllegalArgumentException.class, () -> render("{{ .Values.big }}"));
        assertThrows(UnsupportedOperationException.class, () -> render("{{ include \"x\" . }}"));
        assertThrows(UnsupportedOperationException.class, () -> render("{{ range .Values.l }}{{ end }}"));
        assertThrows(UnsupportedOperationException.class, () -> render("{{ .Values.a.b | upper }}"));
        assertThrows(IllegalArgumentException.class, () -> render("{{ if .Values.a.on }}x"));
    }
}
