package io.delayedtask.operator.schedule;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** One Lua script from {@code src/main/resources/lua/}, with the SHA-1 Redis knows it by. */
public record LuaScript(String name, String source, String sha1) {

  public static final LuaScript SCHEDULE = load("schedule");
  public static final LuaScript REPAIR = load("repair");
  public static final LuaScript CANCEL = load("cancel");
  public static final LuaScript CLAIM = load("claim");
  public static final LuaScript ACK = load("ack");
  public static final LuaScript RELEASE = load("release");
  public static final LuaScript REQUEUE = load("requeue");
  public static final LuaScript COUNTS = load("counts");
  public static final LuaScript QUEUE_CLAIM = load("queue-claim");
  public static final LuaScript QUEUE_FREE = load("queue-free");
  public static final LuaScript QUEUE_COUNTS = load("queue-counts");

  public static final java.util.List<LuaScript> ALL =
      java.util.List.of(
          SCHEDULE,
          REPAIR,
          CANCEL,
          CLAIM,
          ACK,
          RELEASE,
          REQUEUE,
          COUNTS,
          QUEUE_CLAIM,
          QUEUE_FREE,
          QUEUE_COUNTS);

  static LuaScript load(String name) {
    String resource = "/lua/" + name + ".lua";
    try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "Lua script " + resource + " is missing from the classpath");
      }
      String source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new LuaScript(name, source, sha1(source));
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + resource, e);
    }
  }

  private static String sha1(String source) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required by the Java platform", e);
    }
  }
}
