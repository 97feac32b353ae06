package io.delayedtask.operator.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The harness's own view of the Redis server: its identity, per-command call counters ({@code INFO
 * commandstats}) and a log of every command ({@code SLOWLOG} with a zero threshold). Its connection
 * is named so that its own commands are left out of every count.
 */
final class RedisProbe implements AutoCloseable {
  static final String CLIENT_NAME = "bench-harness";

  /** Commands only the harness sends; they are not part of any system's cost. */
  private static final Set<String> HARNESS_COMMANDS =
      Set.of("info", "slowlog", "config", "flushall");

  /**
   * Entries logged while a script runs come from Redis's internal Lua client, without an address.
   */
  private static final String SCRIPT_CLIENT_ADDRESS_PREFIX = "?";

  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> redis;
  private final Map<String, String> scriptNames;

  /** {@code scriptNames}: SHA-1 to a readable name, for the scripts whose source we know. */
  RedisProbe(String uri, Map<String, String> scriptNames) {
    this.scriptNames = Map.copyOf(scriptNames);
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setClientName(CLIENT_NAME);
    redisUri.setTimeout(Duration.ofSeconds(60));
    client = RedisClient.create(redisUri);
    connection = client.connect();
    redis = connection.sync();
  }

  /** "redis_version (executable)". */
  String serverDescription() {
    Map<String, String> server = fields(redis.info("server"));
    return "Redis "
        + server.get("redis_version")
        + " ("
        + server.getOrDefault("executable", "?")
        + ")";
  }

  void flushAll() {
    redis.flushall();
  }

  /** Calls per command name since the server started, counting commands run inside scripts too. */
  Map<String, Long> commandCalls() {
    Map<String, Long> calls = new HashMap<>();
    fields(redis.info("commandstats"))
        .forEach(
            (key, value) -> {
              String command = key.substring("cmdstat_".length());
              String count = value.substring("calls=".length(), value.indexOf(','));
              calls.put(command, Long.parseLong(count));
            });
    return calls;
  }

  /** Calls made between two {@link #commandCalls()} snapshots, the harness's own left out. */
  static long callsBetween(Map<String, Long> before, Map<String, Long> after) {
    long total = 0;
    for (Map.Entry<String, Long> entry : after.entrySet()) {
      if (!HARNESS_COMMANDS.contains(entry.getKey())) {
        total += entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
      }
    }
    return total;
  }

  /** From now on every command is logged with its duration, up to {@code capacity} entries. */
  void startCommandLog(long capacity) {
    redis.configSet("slowlog-log-slower-than", "0");
    redis.configSet("slowlog-max-len", Long.toString(capacity));
    redis.slowlogReset();
  }

  /** Reads and summarises the command log since {@link #startCommandLog}, then stops logging. */
  CommandLog readCommandLog(long capacity) {
    List<Object> entries = redis.slowlogGet(Integer.MAX_VALUE);
    redis.configSet("slowlog-log-slower-than", "10000");
    redis.slowlogReset();
    long clientCommands = 0;
    long scriptCommands = 0;
    long longestMicros = -1;
    String longestCommand = "";
    Map<String, Long> clientCommandsByName = new TreeMap<>();
    Map<String, Histogram> durationsByName = new TreeMap<>();
    for (Object raw : entries) {
      List<?> entry = (List<?>) raw;
      long micros = (Long) entry.get(2);
      List<?> args = (List<?>) entry.get(3);
      String address = entry.size() > 4 ? String.valueOf(entry.get(4)) : "";
      String name = entry.size() > 5 ? String.valueOf(entry.get(5)) : "";
      if (CLIENT_NAME.equals(name)) {
        continue;
      }
      String command = label(args);
      if (address.startsWith(SCRIPT_CLIENT_ADDRESS_PREFIX)) {
        scriptCommands++;
        continue;
      }
      clientCommands++;
      clientCommandsByName.merge(command, 1L, Long::sum);
      durationsByName.computeIfAbsent(command, c -> new Histogram(3)).recordValue(micros);
      if (micros > longestMicros) {
        longestMicros = micros;
        longestCommand =
            command + (command.startsWith("EVAL") || args.size() < 2 ? "" : " " + args.get(1));
      }
    }
    Map<String, Durations> durations = new TreeMap<>();
    durationsByName.forEach(
        (command, histogram) ->
            durations.put(
                command,
                new Durations(
                    histogram.getTotalCount(),
                    histogram.getValueAtPercentile(50),
                    histogram.getValueAtPercentile(99),
                    histogram.getMaxValue())));
    return new CommandLog(
        clientCommands,
        scriptCommands,
        longestMicros,
        longestCommand,
        clientCommandsByName,
        durations,
        entries.size() >= capacity);
  }

  /**
   * The command name; for a script, which script (by name when known, else SHA prefix and key
   * count).
   */
  private String label(List<?> args) {
    if (args.isEmpty()) {
      return "?";
    }
    String command = String.valueOf(args.get(0)).toUpperCase();
    if (command.equals("EVALSHA") && args.size() > 2) {
      String sha = String.valueOf(args.get(1));
      String known = scriptNames.get(sha);
      return known != null
          ? "EVALSHA " + known
          : "EVALSHA " + sha.substring(0, 7) + " (" + args.get(2) + " keys)";
    }
    return command;
  }

  private static Map<String, String> fields(String info) {
    Map<String, String> fields = new HashMap<>();
    for (String line : info.split("\r?\n")) {
      int colon = line.indexOf(':');
      if (!line.startsWith("#") && colon > 0) {
        fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return fields;
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }

  /**
   * What the command log showed: commands sent by clients (round trips), commands run inside
   * scripts, the longest client command and its duration, and whether the log overflowed.
   */
  record CommandLog(
      long clientCommands,
      long scriptCommands,
      long longestMicros,
      String longestCommand,
      Map<String, Long> clientCommandsByName,
      Map<String, Durations> durations,
      boolean overflowed) {}

  /** How long one kind of client command took inside Redis, in microseconds. */
  record Durations(long count, long p50Micros, long p99Micros, long maxMicros) {}
}
