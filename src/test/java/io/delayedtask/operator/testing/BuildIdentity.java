package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

/**
 * What a benchmark or scale report measured, for its first line: the commit of the working tree
 * ({@code git rev-parse --short HEAD}, "-dirty" when {@code git status --porcelain} lists anything)
 * and the jar or classes under test with the commit they were built from. The build writes that
 * commit into {@value #BUILD_PROPERTIES} (exec-maven-plugin, generate-resources; "-dirty" there
 * when tracked files differed from HEAD), so a baseline jar built elsewhere names its own commit,
 * not this tree's.
 */
public final class BuildIdentity {
  /** Written by the build into every jar and {@code target/classes} (see {@code BuildInfo}). */
  public static final String BUILD_PROPERTIES = "META-INF/delayed-task-operator/build.properties";

  private BuildIdentity() {}

  /**
   * {@code commit b7e7dcc} or {@code commit b7e7dcc-dirty} for the working tree the run started in.
   */
  public static String workingTree() {
    Optional<String> head = git(Path.of("."), "rev-parse", "--short", "HEAD");
    if (head.isEmpty()) {
      return "commit unknown (not a git checkout)";
    }
    boolean dirty = git(Path.of("."), "status", "--porcelain").map(s -> !s.isEmpty()).orElse(true);
    return "commit " + head.get() + (dirty ? "-dirty" : "");
  }

  /**
   * One line naming the jar a run measures: its path, the first 12 hex digits of its SHA-256, and
   * the commit it was built from. For a jar built before the build recorded its commit, {@code
   * declaredCommit} (e.g. {@code -Dbaseline.commit}) is printed as declared, else "unknown".
   */
  public static String jar(Path jar, Optional<String> declaredCommit) {
    String built =
        builtCommit(jar)
            .map(c -> "built from commit " + c)
            .or(
                () ->
                    declaredCommit.map(
                        c -> "commit " + c + " as declared by the caller (the jar records none)"))
            .orElse(
                "commit unknown (the jar records none; a baseline can declare it with -Dbaseline.commit)");
    return "jar " + jar + " (sha256 " + sha256(jar) + ", " + built + ")";
  }

  /**
   * As {@link #jar(Path, Optional)} for the build under test, plus the working tree the harness ran
   * from.
   */
  public static String jarUnderTest(Path jar) {
    return jar(jar, Optional.empty()) + "; harness from the working tree at " + workingTree();
  }

  /**
   * One line naming the classes a run measures in process (the benchmark): where {@code anchor} was
   * loaded from, the commit their build recorded, and the working tree's commit now.
   */
  public static String classes(Class<?> anchor) {
    String location;
    try {
      location =
          Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException | RuntimeException e) {
      location = "unknown location";
    }
    Properties properties = new Properties();
    try (InputStream in = anchor.getClassLoader().getResourceAsStream(BUILD_PROPERTIES)) {
      if (in != null) {
        properties.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String built =
        Optional.ofNullable(properties.getProperty("commit"))
            .map(BuildIdentity::shortCommit)
            .orElse("unknown");
    return "classes "
        + location
        + " (built from commit "
        + built
        + "); working tree at "
        + workingTree();
  }

  /** The commit recorded in the jar's {@value #BUILD_PROPERTIES}, shortened, "-dirty" kept. */
  public static Optional<String> builtCommit(Path jar) {
    try (JarFile file = new JarFile(jar.toFile())) {
      ZipEntry entry = file.getEntry(BUILD_PROPERTIES);
      if (entry == null) {
        return Optional.empty();
      }
      Properties properties = new Properties();
      try (InputStream in = file.getInputStream(entry)) {
        properties.load(in);
      }
      return Optional.ofNullable(properties.getProperty("commit"))
          .filter(c -> !c.equals("unknown"))
          .map(BuildIdentity::shortCommit);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + jar, e);
    }
  }

  static String shortCommit(String commit) {
    String dirty = commit.endsWith("-dirty") ? "-dirty" : "";
    String hash = commit.substring(0, commit.length() - dirty.length());
    return (hash.length() > 7 && hash.matches("[0-9a-f]+") ? hash.substring(0, 7) : hash) + dirty;
  }

  private static String sha256(Path file) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(Files.readAllBytes(file))).substring(0, 12);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Optional<String> git(Path directory, String... args) {
    String[] command = new String[args.length + 3];
    command[0] = "git";
    command[1] = "-C";
    command[2] = directory.toString();
    System.arraycopy(args, 0, command, 3, args.length);
    try {
      Process git =
          new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String out = new String(git.getInputStream().readAllBytes()).trim();
      if (!git.waitFor(10, TimeUnit.SECONDS) || git.exitValue() != 0) {
        return Optional.empty();
      }
      return Optional.of(out);
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }
}
