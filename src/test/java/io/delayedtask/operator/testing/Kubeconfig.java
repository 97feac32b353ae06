package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes a kubeconfig that points kubectl or the operator process at a (mock) API server. */
public final class Kubeconfig {
  private Kubeconfig() {}

  /**
   * A kubeconfig for {@code serverUrl} (http or https; TLS verification off for the mock's
   * self-signed cert).
   */
  public static Path write(Path file, String serverUrl, String namespace) {
    String yaml =
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: sandbox
          cluster:
            server: %s
            insecure-skip-tls-verify: true
        users:
        - name: sandbox
          user:
            token: sandbox
        contexts:
        - name: sandbox
          context:
            cluster: sandbox
            user: sandbox
            namespace: %s
        current-context: sandbox
        """
            .formatted(serverUrl, namespace);
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, yaml);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
