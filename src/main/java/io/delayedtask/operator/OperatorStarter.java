package io.delayedtask.operator;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the JOSDK operator once the API server answers, retrying with backoff, so an unreachable
 * API server at start leaves the process up and not ready instead of ending it.
 */
final class OperatorStarter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OperatorStarter.class);
  private static final Duration FIRST_WAIT = Duration.ofMillis(500);
  private static final Duration MAX_WAIT = Duration.ofSeconds(30);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

  private final Operator operator;
  private final KubernetesClient probe;
  private final Runnable afterStart;
  private final Thread thread;
  private volatile boolean started;
  private volatile boolean closed;

  /**
   * {@code afterStart} runs once the operator has started (its informers have listed what there
   * is).
   */
  OperatorStarter(Operator operator, KubernetesClient client, Runnable afterStart) {
    this.operator = operator;
    // The probe gives up at once: the client's own retries (with backoff, up to minutes) would
    // hold back both the start and the one log line that says why the operator is not ready.
    this.probe =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration())
                    .withRequestRetryBackoffLimit(0)
                    .withConnectionTimeout((int) PROBE_TIMEOUT.toMillis())
                    .withRequestTimeout((int) PROBE_TIMEOUT.toMillis())
                    .build())
            .build();
    this.afterStart = afterStart;
    this.thread = new Thread(this::run, "operator-starter");
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  boolean started() {
    return started;
  }

  private void run() {
    Duration wait = FIRST_WAIT;
    boolean reported = false;
    while (!closed) {
      try {
        probe.getKubernetesVersion();
        synchronized (this) {
          if (closed) {
            return;
          }
          operator.start();
          started = true;
        }
        afterStart.run();
        if (reported) {
          LOG.info("The API server answers again; operator started");
        }
        return;
      } catch (RuntimeException e) {
        if (!reported) {
          LOG.warn(
              "The API server {} is unreachable, not ready; retrying with backoff: {}",
              probe.getMasterUrl(),
              rootCause(e));
          reported = true;
        }
      }
      try {
        Thread.sleep(wait.toMillis()); // backoff between attempts, not a wait for a result
      } catch (InterruptedException e) {
        return;
      }
      wait = wait.multipliedBy(2).compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait.multipliedBy(2);
    }
  }

  /**
   * The innermost cause, which names what failed (connection refused, unknown host), in one line.
   */
  private static String rootCause(Throwable e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return cause == e ? e.toString() : e.getMessage() + " (" + cause + ")";
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    thread.interrupt();
    if (started) {
      operator.stop();
    }
    probe.close();
  }
}
