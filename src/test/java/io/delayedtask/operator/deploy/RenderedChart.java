package io.delayedtask.operator.deploy;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The chart rendered by Helm's own engine (helm-java, in process) and parsed into the fabric8
 * model.
 */
record RenderedChart(List<HasMetadata> objects) {

  static final String RELEASE = "dto";
  static final String NAMESPACE = "ops";
  static final String FULLNAME = "dto-delayed-task-operator";

  /**
   * The Kubernetes version every render assumes: the oldest the chart claims (Chart.yaml's
   * kubeVersion). Without it helm-java's engine assumes v1.20 and refuses the chart.
   */
  static final String KUBE_VERSION = "v1.30.0";

  /** Renders with the given values file content (YAML) on top of values.yaml. */
  static RenderedChart render(String valuesYaml) {
    return new RenderedChart(Manifests.parse(template(valuesYaml)));
  }

  /** What a hook's {@code helm.sh/hook} annotation is renamed to by {@link #renderWithHooks}. */
  static final String HOOK = "rendered.test/hook";

  /**
   * Renders for a release in {@code namespace} with the hooks ({@code helm test}) among the
   * objects: helm-java renders a release's manifest, which leaves hooks out, so a copy of the chart
   * whose {@code helm.sh/hook} annotations are renamed to {@link #HOOK} renders them as ordinary
   * objects.
   */
  static RenderedChart renderWithHooks(String valuesYaml, String namespace) {
    try {
      Path copy = Files.createTempDirectory("chart-");
      try (var paths = Files.walk(Manifests.CHART)) {
        for (Path source : paths.toList()) {
          Path target = copy.resolve(Manifests.CHART.relativize(source).toString());
          if (Files.isDirectory(source)) {
            Files.createDirectories(target);
          } else {
            Files.writeString(
                target, Files.readString(source).replace("helm.sh/hook:", HOOK + ":"));
          }
        }
      }
      Path values = Files.writeString(copy.resolve("test-values.yaml"), valuesYaml);
      return new RenderedChart(
          Manifests.parse(
              new Helm(copy)
                  .template()
                  .withName(RELEASE)
                  .withNamespace(namespace)
                  .withKubeVersion(KUBE_VERSION)
                  .withValuesFile(values)
                  .call()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String template(String valuesYaml) {
    return template(valuesYaml, KUBE_VERSION);
  }

  /**
   * The same as Helm renders it for a cluster of {@code kubeVersion} ({@code helm template
   * --kube-version}).
   */
  static String template(String valuesYaml, String kubeVersion) {
    Path values = null;
    try {
      values = Files.createTempFile("values-", ".yaml");
      Files.writeString(values, valuesYaml);
      return new Helm(Manifests.CHART)
          .template()
          .withName(RELEASE)
          .withNamespace(NAMESPACE)
          .withKubeVersion(kubeVersion)
          .withValuesFile(values)
          .call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (values != null) {
        values.toFile().delete();
      }
    }
  }

  <T extends HasMetadata> List<T> all(Class<T> type) {
    return Manifests.all(objects, type);
  }

  <T extends HasMetadata> T one(Class<T> type) {
    return Manifests.one(objects, type);
  }

  <T extends HasMetadata> T named(Class<T> type, String name) {
    return Manifests.named(objects, type, name);
  }

  Container operatorContainer() {
    return one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  /** The operator container's environment by name (insertion order kept). */
  Map<String, EnvVar> operatorEnv() {
    Map<String, EnvVar> env = new LinkedHashMap<>();
    for (EnvVar variable : operatorContainer().getEnv()) {
      env.put(variable.getName(), variable);
    }
    return env;
  }
}
