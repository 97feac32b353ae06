package io.delayedtask.operator.testing;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Jobs that really run, without a kubelet: on a {@link RealKubernetes}, the Job controller
 * (kube-controller-manager), kube-scheduler and kwok with one fake Node. The scheduler binds a
 * Job's pod to the fake Node, kwok plays its life (Running, then Succeeded) by its stage files, and
 * the real Job controller turns the pod's outcome into the Job's. A pod labelled {@code
 * sandbox.delayedtask.io/outcome: fail} fails instead (our stage {@code kwok/pod-fail.yaml}).
 *
 * <p>Use a dedicated server ({@link RealKubernetes#startDedicated}): on the shared one the Job
 * controller would fight the tests that write Job status by hand ({@link JobOutcomes}).
 */
public final class KwokCluster implements AutoCloseable {
  /** The fake Node's name; every pod the scheduler places lands there. */
  public static final String NODE = "kwok-node-0";

  /** Put {@code fail} under this label on a Job's pod template and its pod fails (exit code 1). */
  public static final String OUTCOME_LABEL = "sandbox.delayedtask.io/outcome";

  public static final String FAIL = "fail";

  private static final String KWOK_VERSION =
      Optional.ofNullable(System.getenv("DELAYEDTASK_KWOK_VERSION")).orElse("0.8.0");

  /**
   * kwok's own stages (from its module's kustomize/stage/), by file name, with their path in the
   * module.
   */
  private static final List<String> KWOK_STAGES =
      List.of(
          "node/fast/node-initialize.yaml",
          "node/heartbeat/node-heartbeat.yaml",
          "pod/fast/pod-ready.yaml",
          "pod/fast/pod-complete.yaml",
          "pod/fast/pod-delete.yaml");

  private static final String OUR_STAGES = "kwok/pod-fail.yaml";
  private static final Duration READY = Duration.ofSeconds(60);

  private final List<Process> processes = new ArrayList<>();

  private KwokCluster(RealKubernetes kube, List<Path> stages) {
    ControlPlaneBinaries binaries = kube.binaries();
    String kubeconfig = "--kubeconfig=" + kube.kubeconfig();
    // The Job controller, the garbage collector so a deleted Job takes its pods with it, and the
    // TTL controller that deletes finished Jobs with ttlSecondsAfterFinished.
    kube.controllerManager(
        "job", "garbagecollector", "namespace", "serviceaccount-token", "ttl-after-finished");
    processes.add(
        kube.startHelper(
            "kube-scheduler",
            binaries.binary("kube-scheduler").toString(),
            kubeconfig,
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            "--secure-port=0"));
    List<String> kwok =
        new ArrayList<>(
            List.of(
                binaries.binary("kwok").toString(),
                kubeconfig,
                // Only our fake Node: a kwok that managed every Node would also play any other
                // test's.
                "--manage-all-nodes=false",
                "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake"));
    stages.forEach(stage -> kwok.add("--config=" + stage));
    processes.add(kube.startHelper("kwok", kwok.toArray(String[]::new)));
    createFakeNode(kube.client());
  }

  /**
   * Starts the Job controller, the scheduler and kwok on {@code kube}, and returns once the fake
   * Node is Ready. Stopped by {@link #close()} (the controller manager stops with the server).
   */
  public static KwokCluster start(RealKubernetes kube) {
    missing(kube.binaries())
        .ifPresent(
            why -> {
              throw new IllegalStateException(why);
            });
    return new KwokCluster(kube, stageFiles(kube.binaries()).orElseThrow());
  }

  /** Why Jobs cannot run here (a missing binary or stage file), or empty when they can. */
  public static Optional<String> missing(ControlPlaneBinaries binaries) {
    List<String> absent =
        Stream.of("kube-controller-manager", "kube-scheduler", "kwok")
            .filter(b -> !binaries.has(b))
            .toList();
    if (!absent.isEmpty()) {
      return Optional.of(
          "no "
              + String.join(", ", absent)
              + " in "
              + binaries.dir()
              + ": run tools/build-control-plane.sh");
    }
    if (kwokStages(binaries).isEmpty()) {
      return Optional.of(
          "kwok's stage files "
              + KWOK_STAGES
              + " are neither in "
              + binaries.dir().resolve("kwok-stages")
              + " nor in the Go module cache (sigs.k8s.io/kwok@v"
              + KWOK_VERSION
              + "/kustomize/stage/)");
    }
    return Optional.empty();
  }

  /** kwok's stages then ours, as files kwok can read. */
  private static Optional<List<Path>> stageFiles(ControlPlaneBinaries binaries) {
    return kwokStages(binaries)
        .map(
            kwok -> {
              List<Path> all = new ArrayList<>(kwok);
              all.add(resourceAsFile(OUR_STAGES));
              return all;
            });
  }

  /**
   * kwok's own stage files: first where the build script copies them ({@code
   * <binaries>/kwok-stages/}, flat), else in the Go module cache the build downloaded kwok into.
   */
  static Optional<List<Path>> kwokStages(ControlPlaneBinaries binaries) {
    Path copied = binaries.dir().resolve("kwok-stages");
    List<Path> flat =
        KWOK_STAGES.stream().map(s -> copied.resolve(Path.of(s).getFileName())).toList();
    if (flat.stream().allMatch(Files::isRegularFile)) {
      return Optional.of(flat);
    }
    Path module = goModCache().resolve("sigs.k8s.io/kwok@v" + KWOK_VERSION + "/kustomize/stage");
    List<Path> inModule = KWOK_STAGES.stream().map(module::resolve).toList();
    return inModule.stream().allMatch(Files::isRegularFile)
        ? Optional.of(inModule)
        : Optional.empty();
  }

  private static Path goModCache() {
    String modCache = System.getenv("GOMODCACHE");
    if (modCache != null && !modCache.isBlank()) {
      return Path.of(modCache);
    }
    String goPath = System.getenv("GOPATH");
    String firstGoPath = goPath == null || goPath.isBlank() ? null : goPath.split(":")[0];
    return firstGoPath != null
        ? Path.of(firstGoPath, "pkg", "mod")
        : Path.of(System.getProperty("user.home"), "go", "pkg", "mod");
  }

  private static Path resourceAsFile(String resource) {
    try (InputStream in = KwokCluster.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no " + resource + " on the test classpath");
      }
      Path file = Files.createTempFile("kwok-stage-", ".yaml");
      file.toFile().deleteOnExit();
      Files.write(file, in.readAllBytes());
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One untainted Node that kwok manages (by its annotation) and marks Ready. */
  private static void createFakeNode(KubernetesClient client) {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(NODE)
                .addToAnnotations("kwok.x-k8s.io/node", "fake")
                .addToLabels("kubernetes.io/hostname", NODE)
                .addToLabels("type", "kwok")
                .endMetadata()
                .build())
        .createOr(existing -> existing.update());
    // The TaintNodesByCondition admission plugin taints every new Node not-ready, and only the node
    // lifecycle controller, which does not run here, would lift it: lift it ourselves (it acts on
    // create only).
    // A merge patch without resourceVersion: kwok updates the Node at the same time, and a patch
    // that carried the version it read would meet 409.
    client
        .nodes()
        .withName(NODE)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"taints\":null}}");
    await("kwok marks Node " + NODE + " Ready")
        .atMost(READY)
        .until(() -> ready(client.nodes().withName(NODE).get()));
  }

  private static boolean ready(Node node) {
    return node != null
        && node.getStatus() != null
        && node.getStatus().getConditions() != null
        && node.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  @Override
  public void close() {
    for (Process process : processes) {
      process.destroy();
    }
  }
}
