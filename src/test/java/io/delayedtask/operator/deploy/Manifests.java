package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Reads multi-document Kubernetes YAML into the fabric8 model, strictly. */
final class Manifests {

  static final Path CHART = Path.of("helm", "delayed-task-operator");
  static final Path PLAIN = Path.of("k8s");
  static final Path EXAMPLES = PLAIN.resolve("examples");

  static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
  private static final Pattern ONLY_COMMENTS = Pattern.compile("(?s)\\s*(#[^\\n]*\\n?\\s*)*");

  private Manifests() {}

  static List<HasMetadata> read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Parses every document into its fabric8 model class and fails when a field is unknown to that
   * class: fabric8 would keep a misspelled field (readOnlyRootFileSystem) as an "additional
   * property" and the API server would drop it silently, so the test has to catch it.
   */
  static List<HasMetadata> parse(String yaml) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String document : DOCUMENT_SEPARATOR.split(yaml)) {
      if (ONLY_COMMENTS.matcher(document).matches()) {
        continue;
      }
      HasMetadata object = SERIALIZATION.unmarshal(document, HasMetadata.class);
      assertThat(object).as("document parses as a Kubernetes object:%n%s", document).isNotNull();
      if (!(object instanceof GenericKubernetesResource)) {
        assertThat(unknownFields(object, object.getKind()))
            .as(
                "fields the fabric8 model of %s/%s does not know",
                object.getKind(), object.getMetadata().getName())
            .isEmpty();
      }
      objects.add(object);
    }
    return objects;
  }

  static <T extends HasMetadata> List<T> all(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> found = all(objects, type);
    assertThat(found).as("exactly one %s", type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  static <T extends HasMetadata> T named(List<HasMetadata> objects, Class<T> type, String name) {
    List<T> found =
        all(objects, type).stream().filter(o -> name.equals(o.getMetadata().getName())).toList();
    assertThat(found).as("exactly one %s named %s", type.getSimpleName(), name).hasSize(1);
    return found.get(0);
  }

  /** Paths of every non-empty additionalProperties map in a fabric8 model object graph. */
  static List<String> unknownFields(Object value, String path) {
    List<String> found = new ArrayList<>();
    collectUnknown(value, path, found);
    return found;
  }

  private static void collectUnknown(Object value, String path, List<String> found) {
    if (value instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        collectUnknown(item, path + "[" + i++ + "]", found);
      }
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.forEach((key, item) -> collectUnknown(item, path + "." + key, found));
      return;
    }
    if (!(value instanceof KubernetesResource)) {
      return;
    }
    for (Method getter : value.getClass().getMethods()) {
      if (getter.getParameterCount() != 0
          || Modifier.isStatic(getter.getModifiers())
          || getter.getDeclaringClass() == Object.class
          || !getter.getName().startsWith("get")) {
        continue;
      }
      Object child = invoke(getter, value);
      if (getter.getName().equals("getAdditionalProperties")) {
        if (child instanceof Map<?, ?> extra && !extra.isEmpty()) {
          found.add(path + " " + extra.keySet());
        }
      } else {
        collectUnknown(child, path + "." + getter.getName().substring(3), found);
      }
    }
  }

  private static Object invoke(Method getter, Object target) {
    try {
      return getter.invoke(target);
    } catch (IllegalAccessException | InvocationTargetException e) {
      return null;
    }
  }
}
