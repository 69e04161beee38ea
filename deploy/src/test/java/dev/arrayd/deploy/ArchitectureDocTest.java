package dev.arrayd.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * docs/architecture.md's module table says what each module depends on: it must be what the poms say
 * (compile-scope dependencies on arrayd modules), for every module the root pom lists, and no more.
 */
class ArchitectureDocTest {

    private static final Pattern ROW = Pattern.compile("^\\| `([a-z/-]+)` \\| ([^|]*) \\|", Pattern.MULTILINE);

    @Test
    void theModuleTableIsThePoms() throws Exception {
        Path root = DeployFiles.module().getParent();
        Map<String, Set<String>> poms = new TreeMap<>();
        for (String module : modules(root.resolve("pom.xml"))) {
            poms.put(module, dependencies(root.resolve(module).resolve("pom.xml")));
        }
        String doc = Files.readString(root.resolve("docs/architecture.md"));
        Map<String, Set<String>> table = new TreeMap<>();
        String section = doc.substring(doc.indexOf("## Modules and their arrows"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        Matcher m = ROW.matcher(section);
        while (m.find()) {
            Set<String> deps = new TreeSet<>();
            for (String d : m.group(2).split(",")) {
                String name = d.trim().replace("`", "");
                if (!name.isEmpty() && !name.equals("—")) {
                    deps.add(name);
                }
            }
            table.put(m.group(1), deps);
        }
        assertTrue(!table.isEmpty(), "a module table under 'Modules and their arrows'");
        assertEquals(poms, table, "docs/architecture.md's module table against the poms");
    }

    private static List<String> modules(Path pom) throws Exception {
        List<String> out = new ArrayList<>();
        NodeList nodes = parse(pom).getElementsByTagName("module");
        for (int i = 0; i < nodes.getLength(); i++) {
            out.add(nodes.item(i).getTextContent().trim());
        }
        return out;
    }

    /** The arrayd modules a pom depends on at compile scope (runtime jars, not test or provided). */
    private static Set<String> dependencies(Path pom) throws Exception {
        Set<String> out = new TreeSet<>();
        Element project = parse(pom).getDocumentElement();
        NodeList all = project.getElementsByTagName("dependency");
        for (int i = 0; i < all.getLength(); i++) {
            Element d = (Element) all.item(i);
            if (!d.getParentNode().getParentNode().equals(project)) {
                continue; // dependencyManagement, plugins
            }
            String group = text(d, "groupId");
            String scope = text(d, "scope");
            String type = text(d, "type");
            if ("dev.arrayd".equals(group) && (scope.isEmpty() || scope.equals("compile")) && type.isEmpty()) {
                out.add(moduleOf(text(d, "artifactId")));
            }
        }
        return out;
    }

    private static String moduleOf(String artifact) {
        return switch (artifact) {
            case "arrayd-client" -> "client-java";
            default -> artifact.replaceFirst("^arrayd-", "").replaceFirst("^devices-", "devices/");
        };
    }

    private static String text(Element e, String tag) {
        NodeList n = e.getElementsByTagName(tag);
        return n.getLength() == 0 ? "" : n.item(0).getTextContent().trim();
    }

    private static Document parse(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }
}
