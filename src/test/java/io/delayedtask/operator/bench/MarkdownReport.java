package io.delayedtask.operator.bench;

import io.delayedtask.operator.bench.FireRecorder.LagSummary;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** Renders the results as Markdown: one summary table, then the detail behind each figure. */
final class MarkdownReport {
  private MarkdownReport() {}

  static String render(String environment, BenchParameters p, List<SystemResult> results) {
    StringBuilder out = new StringBuilder();
    out.append(environment).append("\n\n");
    out.append(
        String.format(
            Locale.ROOT,
            "Steady load: %,d tasks/s for %d s (after %d s warm-up), each due %d-%d ms after it is scheduled. "
                + "Drain: %,d entries due at one instant; drain time = the last delivery - the due instant. Lag = delivery to the consumer (local wall clock) - due time.%n%n",
            p.ratePerSecond(),
            p.load().toSeconds(),
            p.warmup().toSeconds(),
            p.aheadMin().toMillis(),
            p.aheadMax().toMillis(),
            p.drainEntries()));
    out.append(
            "| System | Fire lag p50 | p99 | max | Fired early | Redis commands / fired task: sent by clients (all, incl. inside scripts) | Drain time, ")
        .append(String.format(Locale.ROOT, "%,d", p.drainEntries()))
        .append(" same-instant entries | Longest command during drain |\n");
    out.append("|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (SystemResult r : results) {
      LagSummary lag = r.steady().lag();
      SystemResult.Drain drain = r.drain();
      out.append("| ")
          .append(r.system())
          .append(" | ")
          .append(millis(lag.p50Millis()))
          .append(" | ")
          .append(millis(lag.p99Millis()))
          .append(" | ")
          .append(millis(lag.maxMillis()))
          .append(" | ")
          .append(lag.early() + drain.lag().early())
          .append(" | ")
          .append(
              String.format(
                  Locale.ROOT,
                  "%.2f (%.2f)",
                  r.steady().clientCommandsPerTask(),
                  r.steady().commandsPerTask()))
          .append(" | ")
          .append(drainTime(drain))
          .append(" | ")
          .append(longest(drain))
          .append(" |\n");
    }
    out.append("\n### Detail\n\n");
    out.append(
        "| System | Steady: scheduled / fired / duplicates / early by Redis clock | Steady: client commands per fired task | Longest command, steady | Machine hiccups, steady: p99 / max | Drain: load time | Drain: fired / duplicates | Drain: commands per entry to claim and deliver, clients (all) | Drain lag p50 |\n");
    out.append("|---|---|---|---|--:|--:|---|--:|--:|\n");
    for (SystemResult r : results) {
      LagSummary lag = r.steady().lag();
      SystemResult.Drain drain = r.drain();
      out.append("| ")
          .append(r.system())
          .append(" | ")
          .append(lag.scheduled())
          .append(" / ")
          .append(lag.fired())
          .append(" / ")
          .append(lag.duplicates() + drain.lag().duplicates())
          .append(" / ")
          .append(lag.earlyByServerClock() + drain.lag().earlyByServerClock())
          .append(" | ")
          .append(breakdown(r.steady().log().clientCommandsByName(), lag.fired()))
          .append(" | ")
          .append(
              String.format(
                  Locale.ROOT,
                  "%.2f ms %s",
                  r.steady().log().longestMicros() / 1000.0,
                  r.steady().log().longestCommand()))
          .append(" | ")
          .append(millis(r.steady().hiccups().p99Millis()))
          .append(" / ")
          .append(millis(r.steady().hiccups().maxMillis()))
          .append(" | ")
          .append(String.format(Locale.ROOT, "%,d ms", drain.loadMillis()))
          .append(drain.loadOverran() ? " (overran the due instant)" : "")
          .append(" | ")
          .append(drain.lag().fired())
          .append(" / ")
          .append(drain.lag().duplicates())
          .append(" | ")
          .append(
              String.format(
                  Locale.ROOT,
                  "%.2f (%.2f)",
                  drain.clientCommandsPerTask(),
                  drain.commandsPerTask()))
          .append(" | ")
          .append(millis(drain.lag().p50Millis()))
          .append(" |\n");
    }
    out.append(
        "\n### Client commands during the drain: how many, and how long each took inside Redis\n\n");
    out.append("| System | Command | Calls | p50 | p99 | max |\n|---|---|--:|--:|--:|--:|\n");
    for (SystemResult r : results) {
      r.drain()
          .log()
          .durations()
          .forEach(
              (command, d) ->
                  out.append(
                      String.format(
                          Locale.ROOT,
                          "| %s | %s | %,d | %.3f ms | %.3f ms | %.3f ms |%n",
                          r.system(),
                          command,
                          d.count(),
                          d.p50Micros() / 1000.0,
                          d.p99Micros() / 1000.0,
                          d.maxMicros() / 1000.0)));
    }
    return out.toString();
  }

  private static String drainTime(SystemResult.Drain drain) {
    if (!drain.complete()) {
      return String.format(
          Locale.ROOT, "not done in time-out: %,d of %,d", drain.lag().fired(), drain.entries());
    }
    return String.format(
        Locale.ROOT,
        "%,.0f ms (%,.0f/s)",
        drain.drainMillis(),
        drain.entries() / (drain.drainMillis() / 1000.0));
  }

  private static String longest(SystemResult.Drain drain) {
    if (drain.log().longestMicros() < 0) {
      return "none logged";
    }
    return String.format(
        Locale.ROOT,
        "%.2f ms (%s)%s",
        drain.log().longestMicros() / 1000.0,
        drain.log().longestCommand(),
        drain.log().overflowed() ? " [log overflowed]" : "");
  }

  private static String breakdown(Map<String, Long> byName, long fired) {
    long per = Math.max(1, fired);
    return byName.entrySet().stream()
        .filter(e -> e.getValue() * 1000 >= per) // hide commands under 0.001 per task
        .map(e -> String.format(Locale.ROOT, "%s %.3f", e.getKey(), (double) e.getValue() / per))
        .collect(Collectors.joining(", "));
  }

  private static String millis(double value) {
    return value < 10
        ? String.format(Locale.ROOT, "%.2f ms", value)
        : String.format(Locale.ROOT, "%,.0f ms", value);
  }
}
