package io.delayedtask.operator.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import io.delayedtask.operator.testing.RealKubernetes;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The chart installed by Helm's own engine (helm-java, in process) into a real API server, as
 * {@code helm install <name> helm/delayed-task-operator -n <namespace> -f values.yaml} does. No
 * {@code --wait}: no kubelet runs, so no pod ever becomes ready; what the API server stored is what
 * these tests look at.
 */
record ChartRelease(RealKubernetes kube, String name, String namespace, Release release) {

  static final String CHART_NAME = "delayed-task-operator";

  /**
   * Installs into {@code namespace}, which must exist (as must any watchNamespaces). Where the CRD
   * is already there (the toolkit installs the build's on every server it starts, or another
   * release owns it) and {@code valuesYaml} says nothing of {@code crds}, the release leaves it out
   * ({@code crds.enabled=false}), as docs/install.md tells a second release to: Helm would refuse a
   * CRD it does not own.
   */
  static ChartRelease install(
      RealKubernetes kube, String name, String namespace, String valuesYaml) {
    Path values = null;
    try {
      values = Files.createTempFile("values-", ".yaml");
      Files.writeString(values, valuesYaml);
      InstallCommand install =
          new Helm(Manifests.CHART)
              .install()
              .withName(name)
              .withNamespace(namespace)
              .withKubeConfigContents(kube.kubeconfigYaml())
              .withValuesFile(values);
      if (!valuesYaml.contains("crds:")
          && kube.client()
                  .apiextensions()
                  .v1()
                  .customResourceDefinitions()
                  .withName("delayedtasks.delayedtask.io")
                  .get()
              != null) {
        install.set("crds.enabled", false);
      }
      Release release = install.call();
      return new ChartRelease(kube, name, namespace, release);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (values != null) {
        values.toFile().delete();
      }
    }
  }

  /** {@code helm upgrade <name> helm/delayed-task-operator -n <namespace> -f values.yaml}. */
  static ChartRelease upgrade(
      RealKubernetes kube, String name, String namespace, String valuesYaml) {
    Path values = null;
    try {
      values = Files.createTempFile("values-", ".yaml");
      Files.writeString(values, valuesYaml);
      Release release =
          new Helm(Manifests.CHART)
              .upgrade()
              .withName(name)
              .withNamespace(namespace)
              .withKubeConfigContents(kube.kubeconfigYaml())
              .withValuesFile(values)
              .call();
      return new ChartRelease(kube, name, namespace, release);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (values != null) {
        values.toFile().delete();
      }
    }
  }

  /** {@code helm uninstall <name> -n <namespace>}. */
  static void uninstall(RealKubernetes kube, String name, String namespace) {
    Helm.uninstall(name)
        .withNamespace(namespace)
        .withKubeConfigContents(kube.kubeconfigYaml())
        .call();
  }

  /**
   * "<release>-delayed-task-operator": the Deployment, ServiceAccount, Lease and ClusterRole name.
   */
  String fullname() {
    return name + "-" + CHART_NAME;
  }

  /** The Deployment as the API server stored it. */
  Deployment deployment() {
    return kube.client().apps().deployments().inNamespace(namespace).withName(fullname()).require();
  }

  /**
   * The environment the operator container of the installed Deployment would get in a pod named
   * {@code podName}: the chart's variables with the downward API resolved. Only the operator's own
   * variables and POD_NAMESPACE (its Lease namespace default) are kept; JVM options are the test's.
   */
  Map<String, String> operatorEnvironment(String podName) {
    List<EnvVar> env =
        deployment().getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    return PodEnvironment.resolve(Map.of(), env, namespace, podName).entrySet().stream()
        .filter(e -> e.getKey().startsWith("DELAYEDTASK_") || e.getKey().equals("POD_NAMESPACE"))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  /**
   * A kubeconfig whose only credential is a TokenRequest token of the chart's ServiceAccount: who
   * uses it has exactly the rights the chart grants.
   */
  Path serviceAccountKubeconfig(Path file) {
    return kube.serviceAccountKubeconfig(namespace, fullname(), file);
  }
}
