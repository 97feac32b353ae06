package io.delayedtask.operator.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@code kubectl dt} plugin (the Go program in {@code kubectl-dt/}), built once into {@code
 * target/kubectl-dt/kubectl-dt} offline, as {@link KstatusProgram} builds tools/kstatus: its
 * modules are fetched, and its packages compiled into Go's build cache, by {@code
 * tools/build-control-plane.sh}. Then installed as a user installs it: the one file copied into a
 * directory of its own that goes first on the PATH, where both {@code kubectl-dt} and the real
 * {@code kubectl dt} (kubectl's plugin lookup) find it. Without {@code go} on the PATH (or {@code
 * DELAYEDTASK_GO}) the test skips loudly, and fails with CI=true ({@link RequiredTool}).
 */
public final class KubectlDtProgram {
  public static final Path SOURCE = Path.of("kubectl-dt");
  private static final Path BUILT = Path.of("target/kubectl-dt/kubectl-dt").toAbsolutePath();
  private final Path bin;
  private final Path kubeconfig;
  private final Path kubectl;

  private KubectlDtProgram(Path bin, Path kubeconfig, Path kubectl) {
    this.bin = bin;
    this.kubeconfig = kubeconfig;
    this.kubectl = kubectl;
  }

  /**
   * Builds (or re-links from Go's cache) the plugin into target/kubectl-dt and returns that file.
   */
  public static synchronized Path build() {
    Path go =
        RequiredTool.find(
            "go",
            "DELAYEDTASK_GO",
            "Go 1.26 from go.dev/dl on the PATH, as tools/build-control-plane.sh needs it too");
    ProcessBuilder builder =
        new ProcessBuilder(
                go.toString(),
                "build",
                "-trimpath",
                "-ldflags",
                "-s -w",
                "-o",
                BUILT.toString(),
                ".")
            .directory(SOURCE.toFile());
    offline(builder);
    Result built = run(builder, 20);
    if (!built.ok() || !Files.isExecutable(BUILT)) {
      throw new IllegalStateException(
          "go build of kubectl-dt (offline, modules from Go's cache: run "
              + "tools/build-control-plane.sh once to fetch them) failed: "
              + built.output());
    }
    return BUILT;
  }

  /** {@code go test ./...} of the plugin, offline; its output (the test fails when it does). */
  public static Result goTest() {
    Path go = RequiredTool.find("go", "DELAYEDTASK_GO", "Go 1.26 from go.dev/dl on the PATH");
    ProcessBuilder builder =
        new ProcessBuilder(go.toString(), "test", "./...").directory(SOURCE.toFile());
    offline(builder);
    return run(builder, 20);
  }

  /**
   * Builds the plugin and installs it as {@code dir/kubectl-dt}, the way the install docs say (one
   * file onto the PATH), to run with {@code kubeconfig} and the control plane's {@code kubectl}.
   */
  public static KubectlDtProgram install(Path dir, Path kubeconfig, Path kubectl) {
    Path built = build();
    try {
      Files.createDirectories(dir);
      Path installed = dir.resolve("kubectl-dt");
      Files.copy(built, installed, StandardCopyOption.REPLACE_EXISTING);
      installed.toFile().setExecutable(true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new KubectlDtProgram(dir, kubeconfig, kubectl);
  }

  public Path executable() {
    return bin.resolve("kubectl-dt");
  }

  /**
   * {@code kubectl-dt ARGS --kubeconfig=...}: the installed file (Java looks a command up on its
   * own PATH, not the child's, so it is named by its path; {@link #viaKubectl} has kubectl look it
   * up).
   */
  public Result run(String... args) {
    return run(kubeconfig, args);
  }

  public Result run(Path kubeconfig, String... args) {
    List<String> command = new ArrayList<>();
    command.add(executable().toString());
    command.addAll(List.of(args));
    command.add("--kubeconfig=" + kubeconfig);
    return run(onPath(new ProcessBuilder(command)), 2);
  }

  /** The real {@code kubectl dt ARGS --kubeconfig=...}: kubectl finds the plugin on the PATH. */
  public Result viaKubectl(String... args) {
    List<String> command = new ArrayList<>();
    command.add(kubectl.toString());
    command.add("dt");
    command.addAll(List.of(args));
    command.add("--kubeconfig=" + kubeconfig);
    return run(onPath(new ProcessBuilder(command)), 2);
  }

  private ProcessBuilder onPath(ProcessBuilder builder) {
    String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
    builder.environment().put("PATH", bin + java.io.File.pathSeparator + path);
    builder.environment().remove("KUBECONFIG");
    return builder;
  }

  private static void offline(ProcessBuilder builder) {
    // Only the Go on this machine; go.mod/go.sum as committed; modules from Go's cache only, as
    // tools/build-control-plane.sh fetched them: the test downloads nothing.
    builder.environment().put("GOTOOLCHAIN", "local");
    builder.environment().put("GOFLAGS", "-mod=readonly -buildvcs=false");
    builder.environment().put("GOPROXY", "off");
    builder.environment().put("CGO_ENABLED", "0");
  }

  /**
   * What a run printed, its exit code, and when (ms after the start) its first line of standard
   * output came and it ended.
   */
  public record Result(
      int exitCode, String stdout, String stderr, long firstLineMillis, long endMillis) {
    public boolean ok() {
      return exitCode == 0;
    }

    public List<String> lines() {
      return stdout.isEmpty() ? List.of() : List.of(stdout.split("\n"));
    }

    /** Everything, for assertion messages. */
    public String output() {
      return "exit " + exitCode + "\n" + stdout + stderr;
    }
  }

  /** Runs a program to its end, timing its first line of standard output. */
  public static Result run(ProcessBuilder builder, int minutes) {
    try {
      long started = System.nanoTime();
      Process process = builder.start();
      process.getOutputStream().close();
      CompletableFuture<String> err =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return new String(
                      process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
      StringBuilder out = new StringBuilder();
      long first = -1;
      try (BufferedReader reader =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          if (first < 0) {
            first = System.nanoTime() - started;
          }
          out.append(line).append('\n');
        }
      }
      if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            builder.command() + " did not finish in " + minutes + " min");
      }
      long end = System.nanoTime() - started;
      return new Result(
          process.exitValue(),
          out.toString(),
          err.join(),
          first < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(first),
          TimeUnit.NANOSECONDS.toMillis(end));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
