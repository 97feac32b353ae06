package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Go program {@code tools/kstatus} (the real kstatus library of sigs.k8s.io/cli-utils), built
 * once into {@code target/kstatus}, offline: its modules are fetched, and its packages compiled
 * into Go's build cache, by {@code tools/build-control-plane.sh} (a missing one fails the build
 * naming it). {@code go build} is cached by Go itself: cold it compiles cli-utils and apimachinery
 * (minutes on a busy 2-core machine), warm it takes well under a second. Without {@code go} on the
 * PATH (or {@code DELAYEDTASK_GO}) the test skips loudly, and fails with CI=true ({@link
 * RequiredTool}).
 */
public final class KstatusProgram {
  private static final Path SOURCE = Path.of("tools/kstatus");
  private static final Path BINARY = Path.of("target/kstatus").toAbsolutePath();
  private final Path binary;

  private KstatusProgram(Path binary) {
    this.binary = binary;
  }

  /** Builds (or re-links from Go's cache) the program and returns it. */
  public static synchronized KstatusProgram build() {
    Path go =
        RequiredTool.find(
            "go",
            "DELAYEDTASK_GO",
            "Go 1.26 from go.dev/dl on the PATH, as tools/build-control-plane.sh needs it too");
    ProcessBuilder builder =
        new ProcessBuilder(go.toString(), "build", "-o", BINARY.toString(), ".")
            .directory(SOURCE.toFile())
            .redirectErrorStream(true);
    // Only the Go on this machine (no toolchain download); go.mod/go.sum as committed; the modules
    // from Go's cache only, as tools/build-control-plane.sh (run by .ci/run and mvn verify) fetched
    // them: the test downloads nothing.
    builder.environment().put("GOTOOLCHAIN", "local");
    builder.environment().put("GOFLAGS", "-mod=readonly -buildvcs=false");
    builder.environment().put("GOPROXY", "off");
    String output = run(builder, null, 15);
    if (!Files.isExecutable(BINARY)) {
      throw new IllegalStateException(
          "go build of tools/kstatus produced no " + BINARY + ": " + output);
    }
    return new KstatusProgram(BINARY);
  }

  /**
   * kstatus of every object in a JSON List: "namespace/name" to its status (Current, InProgress,
   * Failed, ...).
   */
  public Map<String, Line> compute(String listJson) {
    String output = run(new ProcessBuilder(binary.toString()), listJson, 1);
    Map<String, Line> lines = new LinkedHashMap<>();
    for (String line : output.split("\n")) {
      if (!line.isBlank()) {
        String[] parts = line.split(" ", 3);
        lines.put(parts[0], new Line(parts[1], parts.length > 2 ? parts[2] : ""));
      }
    }
    return lines;
  }

  /** One object's verdict: kstatus's status and its message. */
  public record Line(String status, String message) {}

  private static String run(ProcessBuilder builder, String stdin, int minutes) {
    try {
      Process process = builder.redirectErrorStream(true).start();
      if (stdin != null) {
        process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      process.getOutputStream().close();
      byte[] out = process.getInputStream().readAllBytes();
      if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            builder.command() + " did not finish in " + minutes + " min");
      }
      String text = new String(out, StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            builder.command() + " exited " + process.exitValue() + ": " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
