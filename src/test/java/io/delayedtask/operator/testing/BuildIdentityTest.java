package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.jar.JarOutputStream;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a scale or benchmark report says it measured: the jar's own commit, never the tree's by
 * mistake.
 */
class BuildIdentityTest {

  @Test
  void aJarNamesTheCommitItsBuildRecordedShortenedWithItsDirtyMark(@TempDir Path dir)
      throws IOException {
    Path jar =
        jar(
            dir.resolve("op.jar"),
            "version=0.1.0\ncommit=0123456789abcdef0123456789abcdef01234567-dirty\n");

    assertThat(BuildIdentity.builtCommit(jar)).contains("0123456-dirty");
    assertThat(BuildIdentity.jar(jar, Optional.of("ec5c48b")))
        .startsWith("jar " + jar + " (sha256 ")
        .endsWith(", built from commit 0123456-dirty)")
        .doesNotContain("ec5c48b");
  }

  @Test
  void aJarThatRecordsNoCommitPrintsTheDeclaredOneAsDeclaredOrUnknown(@TempDir Path dir)
      throws IOException {
    Path old = jar(dir.resolve("before.jar"), null);
    Path unknown = jar(dir.resolve("ide.jar"), "version=0.1.0\ncommit=unknown\n");

    assertThat(BuildIdentity.builtCommit(old)).isEmpty();
    assertThat(BuildIdentity.builtCommit(unknown)).isEmpty();
    assertThat(BuildIdentity.jar(old, Optional.of("ec5c48b")))
        .contains("commit ec5c48b as declared by the caller (the jar records none)");
    assertThat(BuildIdentity.jar(old, Optional.empty())).contains("commit unknown");
  }

  @Test
  void theClassesOfThisBuildAndTheWorkingTreeAreNamed() {
    assertThat(BuildIdentity.classes(BuildIdentity.class))
        .startsWith("classes ")
        .contains("(built from commit ")
        .contains("working tree at commit ");
  }

  private static Path jar(Path path, String buildProperties) throws IOException {
    try (OutputStream file = Files.newOutputStream(path);
        JarOutputStream jar = new JarOutputStream(file)) {
      jar.putNextEntry(new ZipEntry("io/example/Nothing.class"));
      jar.write(new byte[] {1, 2, 3});
      jar.closeEntry();
      if (buildProperties != null) {
        jar.putNextEntry(new ZipEntry(BuildIdentity.BUILD_PROPERTIES));
        jar.write(buildProperties.getBytes(StandardCharsets.ISO_8859_1));
        jar.closeEntry();
      }
    }
    return path;
  }
}
