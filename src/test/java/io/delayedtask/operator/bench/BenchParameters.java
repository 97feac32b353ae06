package io.delayedtask.operator.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Sizes of one benchmark run, from system properties (so a quick run is one flag away): {@code
 * -Dbench.loadSeconds=5 -Dbench.drainEntries=10000}.
 */
record BenchParameters(
    int ratePerSecond,
    Duration warmup,
    Duration load,
    Duration aheadMin,
    Duration aheadMax,
    int drainEntries,
    Duration drainLoadMargin,
    Duration drainTimeout,
    int loaderThreads,
    List<String> systems,
    String outputDirectory) {

  static final String ALL_SYSTEMS = "schedule,redisson,naive100ms,naive1s";

  static BenchParameters fromSystemProperties() {
    int drainEntries = integer("bench.drainEntries", 100_000);
    return new BenchParameters(
        integer("bench.rate", 1_000),
        Duration.ofSeconds(integer("bench.warmupSeconds", 3)),
        Duration.ofSeconds(integer("bench.loadSeconds", 20)),
        Duration.ofMillis(integer("bench.aheadMinMillis", 1_000)),
        Duration.ofMillis(integer("bench.aheadMaxMillis", 2_000)),
        drainEntries,
        // Loading runs at 5,000-20,000 entries/s here; the due instant must come after the last
        // one.
        Duration.ofMillis(integer("bench.drainLoadMarginMillis", 2_000 + drainEntries / 4)),
        Duration.ofSeconds(integer("bench.drainTimeoutSeconds", 120)),
        integer("bench.loaderThreads", 8),
        Arrays.stream(System.getProperty("bench.systems", ALL_SYSTEMS).split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .toList(),
        System.getProperty("bench.out", "target/benchmark"));
  }

  private static int integer(String property, int defaultValue) {
    return parse(property, defaultValue, Integer::parseInt);
  }

  private static <T> T parse(String property, T defaultValue, Function<String, T> parser) {
    String value = System.getProperty(property);
    if (value == null || value.isBlank()) {
      return defaultValue;
    }
    try {
      return parser.apply(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "-D"
              + property
              + "="
              + value
              + " is not a whole number; give e.g. -D"
              + property
              + "="
              + defaultValue);
    }
  }
}
