package io.delayedtask.operator.scale;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The live set of another JVM: {@code jcmd <pid> GC.class_histogram} runs a full GC first and
 * counts only reachable objects, so its total is the heap the process needs, garbage excluded.
 */
final class LiveHeap {
  private static final Pattern TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

  private LiveHeap() {}

  /** Live bytes after a full GC, or -1 (with a line saying why) when jcmd fails. */
  static long bytes(long pid) {
    Path jdkJcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    String jcmd = Files.isExecutable(jdkJcmd) ? jdkJcmd.toString() : "jcmd";
    try {
      Process process =
          new ProcessBuilder(jcmd, Long.toString(pid), "GC.class_histogram")
              .redirectErrorStream(true)
              .start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
        System.out.println("jcmd GC.class_histogram failed: " + out.lines().limit(3).toList());
        return -1;
      }
      Matcher m = TOTAL.matcher(out);
      if (!m.find()) {
        System.out.println("jcmd GC.class_histogram printed no Total line");
        return -1;
      }
      return Long.parseLong(m.group(1));
    } catch (IOException e) {
      System.out.println("jcmd failed: " + e);
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  static String megabytes(long pid) {
    long bytes = bytes(pid);
    return bytes < 0 ? "unknown" : String.format("%,d MB", bytes / (1024 * 1024));
  }
}
