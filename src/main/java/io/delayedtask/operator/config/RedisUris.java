package io.delayedtask.operator.config;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Splitting and redacting the value of DELAYEDTASK_REDIS_URI. */
public final class RedisUris {
  private static final Pattern USER_INFO = Pattern.compile("(://)[^@/]*@");

  private RedisUris() {}

  /**
   * Splits "redis://h1:p1,h2:p2" and "redis://h1:p1,redis://h2:p2" into one URI per node; the
   * scheme and credentials of the first apply to the bare host:port entries that follow it.
   */
  public static List<String> split(String value) {
    if (value.trim().startsWith("redis-sentinel") || value.trim().startsWith("rediss-sentinel")) {
      // Lettuce's own syntax lists sentinels in one URI: redis-sentinel://s1:26379,s2:26379#master
      return List.of(value.trim());
    }
    List<String> uris = new ArrayList<>();
    String[] parts = value.trim().split(",");
    String prefix = null;
    for (String raw : parts) {
      String part = raw.trim();
      if (part.isEmpty()) {
        continue;
      }
      if (part.contains("://")) {
        uris.add(part);
        int at = part.indexOf('@');
        int hostStart = at >= 0 ? at + 1 : part.indexOf("://") + 3;
        prefix = part.substring(0, hostStart);
      } else if (prefix != null) {
        uris.add(prefix + part);
      } else {
        uris.add(part);
      }
    }
    return uris;
  }

  /** The URI with any user:password replaced, fit for logs and error messages. */
  public static String redact(String value) {
    return USER_INFO.matcher(value).replaceAll("$1***@");
  }
}
