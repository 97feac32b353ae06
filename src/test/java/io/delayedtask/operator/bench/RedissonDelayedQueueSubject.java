package io.delayedtask.operator.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's {@code RDelayedQueue}, used the way its documentation shows: offer with a delay into a
 * delayed queue in front of a blocking queue, and consumers that {@code take()} from the blocking
 * queue. Redisson moves due entries (at most 100 per script) on its own timer. As many consumer
 * threads as the project's poller has handler threads, so a single consumer's round trips are not
 * what limits it.
 */
@SuppressWarnings("deprecation") // RDelayedQueue is deprecated in favour of the paid RReliableQueue
final class RedissonDelayedQueueSubject implements DelayQueueUnderTest {
  private final RedissonClient redisson;
  private final RBlockingQueue<String> destination;
  private final RDelayedQueue<String> delayed;
  private static final int CONSUMERS = 8;

  private volatile boolean running;
  private final List<Thread> consumers = new ArrayList<>();

  RedissonDelayedQueueSubject(String uri) {
    Config config = new Config();
    config.setCodec(StringCodec.INSTANCE);
    config.useSingleServer().setAddress(uri);
    redisson = Redisson.create(config);
    destination = redisson.getBlockingQueue("bench:redisson:ready");
    delayed = redisson.getDelayedQueue(destination);
  }

  @Override
  public String name() {
    return "Redisson RDelayedQueue";
  }

  @Override
  public void start(DeliverySink sink) {
    running = true;
    for (int i = 0; i < CONSUMERS; i++) {
      Thread consumer = new Thread(() -> consume(sink), "redisson-consumer-" + i);
      consumer.setDaemon(true);
      consumer.start();
      consumers.add(consumer);
    }
  }

  private void consume(DeliverySink sink) {
    while (running) {
      try {
        sink.delivered(destination.take());
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (running) {
          System.err.println(name() + ": " + e);
        }
      }
    }
  }

  @Override
  public void schedule(String id, long dueEpochMillis) {
    // Redisson takes a delay and adds it to its own System.currentTimeMillis(); computing the delay
    // just before the call keeps its due time within a few microseconds of ours (never earlier).
    long delay = Math.max(0, dueEpochMillis - System.currentTimeMillis());
    delayed.offer(id, delay, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    running = false;
    consumers.forEach(Thread::interrupt);
    delayed.destroy();
    redisson.shutdown();
  }
}
