package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Where the real Kubernetes binaries are: {@code
 * ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/<version>-linux-amd64/}, the directory fabric8
 * kube-api-test reads and {@code tools/build-control-plane.sh} fills.
 */
public record ControlPlaneBinaries(Path testDir, Path dir, String version) {
  /**
   * The oldest Kubernetes minor release the docs claim (ValidatingAdmissionPolicy v1 is GA there),
   * which {@code tools/build-control-plane.sh} builds beside the newest and OldestKubernetesIT runs
   * on.
   */
  public static final String OLDEST_CLAIMED = "1.30";

  /**
   * What kube-api-test itself needs; the rest (controller manager, scheduler, kwok) is optional.
   */
  private static final List<String> REQUIRED = List.of("kube-apiserver", "etcd", "kubectl");

  /** The newest complete set of binaries, if any. */
  public static Optional<ControlPlaneBinaries> find() {
    return find("");
  }

  /**
   * The newest complete set of binaries of one minor release ({@code "1.30"}), or of any when
   * {@code minor} is empty.
   */
  public static Optional<ControlPlaneBinaries> find(String minor) {
    String configured = System.getenv("KUBE_API_TEST_DIR");
    Path testDir =
        configured != null && !configured.isBlank()
            ? Path.of(configured)
            : Path.of(System.getProperty("user.home"), ".kubeapitest");
    Path k8s = testDir.resolve("k8s");
    if (!Files.isDirectory(k8s)) {
      return Optional.empty();
    }
    try (Stream<Path> dirs = Files.list(k8s)) {
      return dirs.filter(d -> REQUIRED.stream().allMatch(b -> Files.isExecutable(d.resolve(b))))
          .filter(d -> minor.isEmpty() || versionOf(d).startsWith(minor + "."))
          .max(
              Comparator.comparing(
                  ControlPlaneBinaries::versionOf, ControlPlaneBinaries::compareVersions))
          .map(d -> new ControlPlaneBinaries(testDir, d, versionOf(d)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Path binary(String name) {
    return dir.resolve(name);
  }

  public boolean has(String name) {
    return Files.isExecutable(binary(name));
  }

  private static String versionOf(Path dir) {
    String name = dir.getFileName().toString();
    int dash = name.indexOf('-');
    return dash < 0 ? name : name.substring(0, dash);
  }

  private static int compareVersions(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < Math.max(x.length, y.length); i++) {
      int c = Integer.compare(i < x.length ? parse(x[i]) : 0, i < y.length ? parse(y[i]) : 0);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  private static int parse(String part) {
    try {
      return Integer.parseInt(part);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
