package io.delayedtask.operator.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Measures how late this machine runs a thread that only asks to sleep 1 ms (the jHiccup idea):
 * garbage collection and CPU starvation by other processes delay every thread alike, so a lag tail
 * that matches the hiccups comes from the machine, not from the system under test.
 */
public final class HiccupMeter implements AutoCloseable {
  private static final long INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final Recorder recorder = new Recorder(TimeUnit.HOURS.toMicros(1), 3);
  private final Thread thread;
  private volatile boolean running = true;

  public HiccupMeter() {
    thread = new Thread(this::measure, "hiccup-meter");
    thread.setDaemon(true);
    thread.start();
  }

  private void measure() {
    while (running) {
      long before = System.nanoTime();
      LockSupport.parkNanos(INTERVAL_NANOS);
      long overslept = System.nanoTime() - before - INTERVAL_NANOS;
      recorder.recordValue(Math.max(0, overslept / 1000));
    }
  }

  /** Starts a new interval; the next {@link #interval()} covers the time from now. */
  public void reset() {
    recorder.reset();
  }

  /** Hiccups since the last reset or interval, in microseconds. */
  public Histogram interval() {
    return recorder.getIntervalHistogram();
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
  }
}
