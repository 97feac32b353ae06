package io.delayedtask.operator.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Writes the chart's README from values.yaml: its comments are the documentation, so the README is
 * generated from them, never edited by hand. One section per top-level value, one row per leaf
 * value with its default and the comment above it; Kubernetes objects (resources, security
 * contexts) are one row with their whole default. {@code ChartReadmeTest} fails when the committed
 * README differs; {@code main} writes it.
 */
public final class ChartReadme {
  static final Path VALUES = Manifests.CHART.resolve("values.yaml");
  static final Path README = Manifests.CHART.resolve("README.md");

  /** Values whose content is a Kubernetes object: documented as one value. */
  static final Set<String> KUBERNETES_OBJECT_VALUES =
      Set.of("resources", "podSecurityContext", "securityContext");

  private static final String GENERAL = "";
  private static final String TABLE = "| value | default | meaning |\n|---|---|---|\n";
  private static final Pattern KEY = Pattern.compile("^( *)([A-Za-z][A-Za-z0-9_.-]*):(.*)$");

  private ChartReadme() {}

  public static void main(String[] args) throws IOException {
    Files.writeString(README, generate());
    System.out.println("wrote " + README);
  }

  static String generate() throws IOException {
    return generate(VALUES);
  }

  static String generate(Path valuesYaml) throws IOException {
    List<String> lines = Files.readAllLines(valuesYaml);
    Map<String, Object> values = new Yaml().load(String.join("\n", lines));
    StringBuilder out = new StringBuilder();
    out.append(
        """
        # delayed-task-operator Helm chart

        <!-- Generated from values.yaml by src/test/java/io/delayedtask/operator/deploy/ChartReadme.java:
             edit the comments in values.yaml, then run
             mvn -q test-compile exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.deploy.ChartReadme
             (ChartReadmeTest fails while this file differs from what it generates). -->

        Installs the delayed-task-operator: the `DelayedTask` CRD (a template: `crds.*`), the operator
        Deployment with least-privilege RBAC, the admission policy, aggregated user roles and,
        by default, a bundled Redis. Licence: Apache-2.0.

        ```bash
        helm install dto helm/delayed-task-operator -n delayed-task-operator --create-namespace
        ```

        `helm upgrade` updates the CRD; `helm uninstall` leaves it, and so every DelayedTask, in
        place (`crds.keep`); a second release in the same cluster sets `crds.enabled=false`
        ([install.md](../../docs/install.md#the-crd-and-helm)). Requirements, the image and what each
        choice means: [install.md](../../docs/install.md); the environment variables the values
        set: [operations.md](../../docs/operations.md#configuration).

        ## Values

        Every value, its default and its meaning, as `values.yaml` comments them;
        `values.schema.json` refuses unknown names and wrong types.
        """);

    // Top-level values that are not sections first ("General"), then one table per section.
    Map<String, StringBuilder> sections = new LinkedHashMap<>();
    sections.put(GENERAL, new StringBuilder("\n### General\n\n" + TABLE));
    Deque<Map.Entry<Integer, String>> parents = new ArrayDeque<>();
    for (int i = 0; i < lines.size(); i++) {
      Matcher key = KEY.matcher(lines.get(i));
      if (!key.matches()) {
        continue;
      }
      int indent = key.group(1).length();
      while (!parents.isEmpty() && parents.peek().getKey() >= indent) {
        parents.pop();
      }
      if (parents.stream().anyMatch(p -> KUBERNETES_OBJECT_VALUES.contains(p.getValue()))) {
        continue;
      }
      List<String> path = new ArrayList<>();
      parents.descendingIterator().forEachRemaining(p -> path.add(p.getValue()));
      path.add(key.group(2));
      String comment = commentAbove(lines, i);
      String inline = key.group(3).strip();
      boolean object = KUBERNETES_OBJECT_VALUES.contains(key.group(2));
      String name = String.join(".", path);
      if (indent == 0 && inline.isEmpty() && !object) {
        sections.put(
            name, new StringBuilder("\n### `" + name + "`\n\n" + comment + "\n\n" + TABLE));
      } else {
        StringBuilder table = sections.get(indent == 0 ? GENERAL : path.get(0));
        if (inline.isEmpty() && !object) {
          table.append("| `").append(name).append("` | | ").append(comment).append(" |\n");
        } else {
          String shown = object ? flow(lookup(values, path)) : inline;
          table
              .append("| `")
              .append(name)
              .append("` | `")
              .append(shown.replace("|", "\\|"))
              .append("` | ")
              .append(comment)
              .append(" |\n");
        }
      }
      parents.push(Map.entry(indent, key.group(2)));
    }
    sections.values().forEach(out::append);
    return out.toString();
  }

  private static String commentAbove(List<String> lines, int index) {
    Deque<String> comment = new ArrayDeque<>();
    for (int j = index - 1; j >= 0 && lines.get(j).strip().startsWith("#"); j--) {
      comment.push(lines.get(j).strip().replaceFirst("^#+ ?", ""));
    }
    return String.join(" ", comment).replace("|", "\\|").replace("<", "&lt;");
  }

  @SuppressWarnings("unchecked")
  private static Object lookup(Map<String, Object> values, List<String> path) {
    Object node = values;
    for (String name : path) {
      node = ((Map<String, Object>) node).get(name);
    }
    return node;
  }

  private static String flow(Object value) {
    DumperOptions options = new DumperOptions();
    options.setDefaultFlowStyle(DumperOptions.FlowStyle.FLOW);
    options.setWidth(Integer.MAX_VALUE);
    return new Yaml(options).dump(value).strip();
  }
}
