package io.delayedtask.operator.task.job;

import io.delayedtask.operator.task.time.Times;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;

/**
 * Deterministic names (docs/reference.md, "Firing at most once per due time"): the Job of a task
 * for a due time is always {@code <task-name>-<8 hex>}, so a second attempt meets AlreadyExists
 * instead of creating a second Job.
 */
public final class JobNames {
  /** A DNS label, and the limit of label values (the Job controller copies the name into one). */
  public static final int MAX_LENGTH = 63;

  private static final int HASH_LENGTH = 8;
  private static final int MAX_PREFIX = MAX_LENGTH - HASH_LENGTH - 1;

  private JobNames() {}

  /** The Job's name for this task uid and due time. */
  public static String jobName(String taskName, String taskUid, Instant due) {
    String prefix =
        shorten(taskName.toLowerCase(java.util.Locale.ROOT).replace('.', '-'), MAX_PREFIX);
    return prefix + "-" + hash(taskUid + "/" + Times.format(due));
  }

  /**
   * The task name as a label value: unchanged when it fits, else shortened like the Job name and
   * suffixed with a hash of the full name so that different long names stay apart.
   */
  public static String taskLabelValue(String taskName) {
    if (taskName.length() <= MAX_LENGTH) {
      return taskName;
    }
    return shorten(taskName, MAX_PREFIX) + "-" + hash(taskName);
  }

  private static String shorten(String name, int max) {
    String cut = name.length() <= max ? name : name.substring(0, max);
    int end = cut.length();
    // A DNS label and a label value must end with a letter or digit.
    while (end > 0 && !Character.isLetterOrDigit(cut.charAt(end - 1))) {
      end--;
    }
    return cut.substring(0, end);
  }

  static String hash(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, HASH_LENGTH);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
