package io.delayedtask.operator.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * An external program a test needs (promtool, prometheus, ...). Missing on a developer's machine:
 * the test is skipped with one loud line saying what to install. Missing on CI ({@code CI=true}):
 * the test fails, so CI never passes by skipping.
 */
public final class RequiredTool {
  private RequiredTool() {}

  /**
   * The program's path: the environment variable {@code override} if set, else {@code name} on the
   * PATH. Skips or fails the calling test when it is not found.
   *
   * @param install how to get it, e.g. {@code "apt-get install -y prometheus"}
   */
  public static Path find(String name, String override, String install) {
    return find(name, override, install, System.getenv());
  }

  static Path find(String name, String override, String install, Map<String, String> env) {
    Optional<Path> found = locate(name, env.get(override), env.get("PATH"));
    if (found.isPresent()) {
      return found.get();
    }
    unusable(name + " is not on the PATH (nor named by " + override + ")", install, env);
    return null; // unreachable
  }

  /**
   * A tool that is there but cannot do what the test needs (a redis-server built without TLS, ...):
   * skips the calling test loudly, or fails it when {@code CI=true}. Never returns.
   */
  public static void unusable(String why, String install) {
    unusable(why, install, System.getenv());
  }

  static void unusable(String why, String install, Map<String, String> env) {
    String line =
        "REQUIRED TOOL MISSING: "
            + why
            + "; install it with `"
            + install
            + "` (tools/install-test-packages.sh)";
    if ("true".equalsIgnoreCase(env.get("CI"))) {
      throw new AssertionError(line + " -- failing, not skipping, because CI=true");
    }
    System.err.println("*** " + line + " -- SKIPPING ***");
    Assumptions.abort(line);
  }

  static Optional<Path> locate(String name, String explicit, String path) {
    if (explicit != null && !explicit.isBlank()) {
      Path file = Path.of(explicit);
      return Files.isExecutable(file) ? Optional.of(file) : Optional.empty();
    }
    if (path == null) {
      return Optional.empty();
    }
    return Stream.of(path.split(java.io.File.pathSeparator))
        .filter(dir -> !dir.isBlank())
        .map(dir -> Path.of(dir, name))
        .filter(Files::isExecutable)
        .findFirst();
  }
}
