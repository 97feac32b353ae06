package io.delayedtask.operator.scale;

import io.delayedtask.operator.testing.ControlPlaneBinaries;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The API server a scale run measures: the fabric8 mock in the harness JVM ({@code mock}) or a real
 * kube-apiserver + etcd of its own ({@code real}, one dedicated server per run, with an audit log).
 * {@code -Dtarget=mock,real} (the default when the real binaries are there) runs the same command
 * against both, one after the other, so their figures come from the same machine minutes.
 */
abstract class ScaleTarget implements AutoCloseable {
  /** The targets named by {@code -Dtarget}, in order. */
  static List<String> selected() {
    String fallback = ControlPlaneBinaries.find().isPresent() ? "mock,real" : "mock";
    List<String> names = new ArrayList<>();
    for (String name : System.getProperty("target", fallback).split(",")) {
      String trimmed = name.trim();
      if (!trimmed.equals("mock") && !trimmed.equals("real")) {
        throw new IllegalArgumentException(
            "-Dtarget=" + System.getProperty("target") + ": give mock, real or mock,real");
      }
      names.add(trimmed);
    }
    if (!names.contains("real")) {
      System.out.println(
          "NOTE: the real API server is not measured (-Dtarget="
              + String.join(",", names)
              + (ControlPlaneBinaries.find().isEmpty()
                  ? "; no binaries: run tools/build-control-plane.sh)"
                  : ")"));
    }
    return names;
  }

  static ScaleTarget start(String name) {
    return name.equals("real") ? new RealTarget() : new MockTarget();
  }

  /** "mock" or "real". */
  abstract String name();

  /** The harness's own client (cluster admin); its requests are not counted as the operator's. */
  abstract KubernetesClient client();

  abstract void createNamespace(String namespace);

  /**
   * A kubeconfig for the operator process, with an identity of its own, watching {@code namespace}.
   */
  abstract Path operatorKubeconfig(String namespace);

  /** Environment the operator process needs for this server besides the kubeconfig. */
  abstract Map<String, String> operatorEnvironment();

  /**
   * The operator's requests received in [from, to], by "verb resource[/subresource]" (a non-2xx
   * answer adds its code, e.g. "update delayedtasks/status 409").
   */
  abstract Map<String, Long> operatorRequests(Instant from, Instant to);

  /** The API server's processes (and etcd's), by name, for CPU and memory figures. */
  abstract Map<String, ProcessHandle> serverProcesses();

  @Override
  public abstract void close();
}
