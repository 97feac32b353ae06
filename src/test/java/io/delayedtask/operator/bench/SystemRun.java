package io.delayedtask.operator.bench;

import io.delayedtask.operator.bench.RedisProbe.CommandLog;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * Drives one system through warm-up, steady load and the same-instant drain, on a flushed Redis.
 */
final class SystemRun {
  /** Enough SLOWLOG entries for every command of a phase, those run inside scripts included. */
  private static final long COMMAND_LOG_CAPACITY = 5_000_000;

  private static final Duration SETTLE = Duration.ofSeconds(10);
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");

  private final RedisProbe probe;
  private final BenchParameters parameters;
  private final HiccupMeter hiccups;

  SystemRun(RedisProbe probe, BenchParameters parameters, HiccupMeter hiccups) {
    this.probe = probe;
    this.parameters = parameters;
    this.hiccups = hiccups;
  }

  SystemResult run(Supplier<DelayQueueUnderTest> factory) throws Exception {
    probe.flushAll();
    PhaseSink sink = new PhaseSink();
    try (DelayQueueUnderTest system = factory.get()) {
      system.start(sink);
      log(system.name() + ": warm-up " + parameters.warmup().toSeconds() + " s");
      FireRecorder warmup = sink.beginPhase();
      warmup.awaitDistinct(
          produceSteadily(system, "w", parameters.warmup()), parameters.aheadMax().plus(SETTLE));
      SystemResult.Steady steady = steady(system, sink);
      SystemResult.Drain drain = drain(system, sink);
      return new SystemResult(system.name(), steady, drain);
    } finally {
      probe.flushAll();
    }
  }

  private SystemResult.Steady steady(DelayQueueUnderTest system, PhaseSink sink) {
    log(
        system.name()
            + ": steady load "
            + parameters.ratePerSecond()
            + "/s for "
            + parameters.load().toSeconds()
            + " s");
    FireRecorder recorder = sink.beginPhase();
    probe.startCommandLog(COMMAND_LOG_CAPACITY);
    Map<String, Long> before = probe.commandCalls();
    hiccups.reset();
    long scheduled = produceSteadily(system, "s", parameters.load());
    if (!recorder.awaitDistinct(scheduled, parameters.aheadMax().plus(SETTLE))) {
      log(system.name() + ": only " + recorder.distinct() + " of " + scheduled + " fired");
    }
    Histogram machine = hiccups.interval();
    long calls = RedisProbe.callsBetween(before, probe.commandCalls());
    CommandLog commands = probe.readCommandLog(COMMAND_LOG_CAPACITY);
    long fired = Math.max(1, recorder.distinct());
    return new SystemResult.Steady(
        recorder.summary(scheduled),
        (double) calls / fired,
        (double) commands.clientCommands() / fired,
        commands,
        new SystemResult.Hiccups(
            machine.getValueAtPercentile(99) / 1000.0, machine.getMaxValue() / 1000.0));
  }

  private SystemResult.Drain drain(DelayQueueUnderTest system, PhaseSink sink) throws Exception {
    int entries = parameters.drainEntries();
    FireRecorder recorder = sink.beginPhase();
    long due = System.currentTimeMillis() + parameters.drainLoadMargin().toMillis();
    log(system.name() + ": loading " + entries + " entries due at one instant");
    long loadStart = System.nanoTime();
    long loaded = loadConcurrently(system, entries, due);
    long loadMillis = (System.nanoTime() - loadStart) / 1_000_000;
    boolean overran = System.currentTimeMillis() >= due;
    probe.startCommandLog(COMMAND_LOG_CAPACITY);
    Map<String, Long> before = probe.commandCalls();
    log(
        system.name()
            + ": loaded in "
            + loadMillis
            + " ms"
            + (overran ? " (LATE: the due instant passed while loading)" : "")
            + ", draining");
    Duration untilDue = Duration.ofMillis(Math.max(0, due - System.currentTimeMillis()));
    boolean complete = recorder.awaitDistinct(loaded, untilDue.plus(parameters.drainTimeout()));
    long calls = RedisProbe.callsBetween(before, probe.commandCalls());
    CommandLog commands = probe.readCommandLog(COMMAND_LOG_CAPACITY);
    double drainMillis =
        complete ? (recorder.lastDeliveryMicros() - due * 1000) / 1000.0 : Double.NaN;
    if (!complete) {
      log(
          system.name()
              + ": drained only "
              + recorder.distinct()
              + " of "
              + loaded
              + " within "
              + parameters.drainTimeout().toSeconds()
              + " s");
    }
    long fired = Math.max(1, recorder.distinct());
    return new SystemResult.Drain(
        entries,
        recorder.summary(loaded),
        drainMillis,
        loadMillis,
        overran,
        (double) calls / fired,
        (double) commands.clientCommands() / fired,
        commands);
  }

  /**
   * Schedules at the configured rate for {@code duration}, each entry 1-2 s ahead; returns how
   * many.
   */
  private long produceSteadily(DelayQueueUnderTest system, String phase, Duration duration) {
    long total = parameters.ratePerSecond() * duration.toSeconds();
    long aheadMin = parameters.aheadMin().toMillis();
    long aheadSpread = Math.max(1, parameters.aheadMax().toMillis() - aheadMin);
    long start = System.nanoTime();
    long sent = 0;
    long scheduled = 0;
    while (sent < total) {
      long elapsedNanos = System.nanoTime() - start;
      long target = Math.min(total, elapsedNanos * parameters.ratePerSecond() / 1_000_000_000L + 1);
      while (sent < target) {
        long due =
            System.currentTimeMillis()
                + aheadMin
                + ThreadLocalRandom.current().nextLong(aheadSpread);
        if (scheduleOrReport(system, BenchIds.id(phase, sent, due), due)) {
          scheduled++;
        }
        sent++;
      }
      LockSupport.parkNanos(100_000);
    }
    return scheduled;
  }

  private long loadConcurrently(DelayQueueUnderTest system, int entries, long due)
      throws Exception {
    int threads = parameters.loaderThreads();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    AtomicLong loaded = new AtomicLong();
    try {
      List<Future<?>> slices = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        slices.add(
            pool.submit(
                () -> {
                  for (int i = first; i < entries; i += threads) {
                    if (scheduleOrReport(system, BenchIds.id("d", i, due), due)) {
                      loaded.incrementAndGet();
                    }
                  }
                }));
      }
      for (Future<?> slice : slices) {
        slice.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return loaded.get();
  }

  private static boolean scheduleOrReport(DelayQueueUnderTest system, String id, long due) {
    try {
      system.schedule(id, due);
      return true;
    } catch (RuntimeException e) {
      log(system.name() + ": schedule failed: " + e);
      return false;
    }
  }

  static void log(String message) {
    System.out.println("[bench " + LocalTime.now().format(CLOCK) + "] " + message);
  }
}
