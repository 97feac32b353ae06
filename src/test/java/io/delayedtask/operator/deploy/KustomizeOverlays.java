package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.ControlPlaneBinaries;
import io.delayedtask.operator.testing.RequiredTool;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The overlays docs/install.md shows, rendered by the real {@code kubectl kustomize} as a user's
 * would be: each YAML block that starts with {@code # <directory>/kustomization.yaml} is written to
 * that directory beside a copy of k8s/, as the page tells the reader to lay it out.
 */
final class KustomizeOverlays {

  static final Path INSTALL_MD = Path.of("docs", "install.md");
  private static final Pattern BLOCK =
      Pattern.compile("(?s)```yaml\\n# ([a-z-]+)/kustomization\\.yaml\\n(.*?)```");

  private KustomizeOverlays() {}

  /** The overlay install.md shows under {@code # <directory>/kustomization.yaml}, rendered. */
  static List<HasMetadata> fromInstallMd(String directory) {
    String page;
    try {
      page = Files.readString(INSTALL_MD);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Matcher block = BLOCK.matcher(page);
    while (block.find()) {
      if (block.group(1).equals(directory)) {
        return render(directory, block.group(2));
      }
    }
    throw new AssertionError(
        "docs/install.md shows no ```yaml block beginning # " + directory + "/kustomization.yaml");
  }

  /** k8s/ itself, as {@code kubectl apply -k k8s/} applies it. */
  static List<HasMetadata> base() {
    return Manifests.parse(kustomize(Manifests.PLAIN));
  }

  private static List<HasMetadata> render(String directory, String kustomization) {
    Path root = null;
    try {
      root = Files.createTempDirectory("overlay-");
      copy(Manifests.PLAIN, root.resolve("k8s"));
      Path overlay = Files.createDirectories(root.resolve(directory));
      Files.writeString(overlay.resolve("kustomization.yaml"), kustomization);
      return Manifests.parse(kustomize(overlay));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (root != null) {
        delete(root);
      }
    }
  }

  private static String kustomize(Path directory) {
    Path kubectl =
        ControlPlaneBinaries.find()
            .map(binaries -> binaries.binary("kubectl"))
            .orElseGet(
                () ->
                    RequiredTool.find(
                        "kubectl", "DELAYEDTASK_TEST_KUBECTL", "tools/build-control-plane.sh"));
    Path errors = null;
    try {
      errors = Files.createTempFile("kustomize-", ".err");
      Process process =
          new ProcessBuilder(kubectl.toString(), "kustomize", directory.toString())
              .redirectError(errors.toFile())
              .start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(process.waitFor(60, TimeUnit.SECONDS))
          .as("kubectl kustomize %s finishes", directory)
          .isTrue();
      assertThat(process.exitValue())
          .as("kubectl kustomize %s: %s", directory, Files.readString(errors))
          .isZero();
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      if (errors != null) {
        errors.toFile().delete();
      }
    }
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path source : paths.toList()) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          Files.copy(source, target);
        }
      }
    }
  }

  private static void delete(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
