package io.delayedtask.operator.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP server on 127.0.0.1 that answers no request until the test says so: a sink that hangs.
 * Each request is recorded as it arrives (path and time, on this process's clock) and held open
 * until {@link #answer(String)} names its path (then 200; {@link #answer(String, int)}: the status
 * given) or the receiver closes; a request the sender gave up on (its timeout) stays held here, as
 * a receiver that never answers would. Loopback only.
 */
public final class HangingReceiver implements AutoCloseable {
  /** A request as it arrived. */
  public record Arrival(String path, Instant at) {}

  private final HttpServer server;
  private final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
  private final Map<String, CountDownLatch> answers = new ConcurrentHashMap<>();
  private final Map<String, Integer> statuses = new ConcurrentHashMap<>();
  private final CountDownLatch closed = new CountDownLatch(1);

  private HangingReceiver(HttpServer server) {
    this.server = server;
  }

  public static HangingReceiver start() {
    try {
      HttpServer server =
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      HangingReceiver receiver = new HangingReceiver(server);
      server.createContext("/", receiver::handle);
      server.setExecutor(
          Executors.newCachedThreadPool(
              runnable -> {
                Thread thread = new Thread(runnable, "hanging-receiver");
                thread.setDaemon(true);
                return thread;
              }));
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new IllegalStateException("cannot start a receiver on loopback", e);
    }
  }

  /** {@code http://127.0.0.1:<port>}. */
  public String base() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The port it listens on, on 127.0.0.1. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Every request so far, in order of arrival. */
  public List<Arrival> arrivals() {
    return List.copyOf(arrivals);
  }

  /** The paths of {@link #arrivals()}. */
  public List<String> paths() {
    return arrivals.stream().map(Arrival::path).toList();
  }

  /** Answers 200 to the request(s) to {@code path}, held now or arriving later. */
  public void answer(String path) {
    answer(path, 200);
  }

  /** Answers {@code status} to the request(s) to {@code path}, held now or arriving later. */
  public void answer(String path, int status) {
    statuses.put(path, status);
    latch(path).countDown();
  }

  private CountDownLatch latch(String path) {
    return answers.computeIfAbsent(path, p -> new CountDownLatch(1));
  }

  private void handle(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getRawPath();
    try (InputStream in = exchange.getRequestBody()) {
      in.readAllBytes();
    }
    arrivals.add(new Arrival(path, Instant.now()));
    try {
      CountDownLatch answered = latch(path);
      // Held until answered or closed; polled so that close() ends every held request.
      while (!answered.await(100, TimeUnit.MILLISECONDS)) {
        if (closed.getCount() == 0) {
          exchange.close();
          return;
        }
      }
      exchange.sendResponseHeaders(statuses.getOrDefault(path, 200), -1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // the sender gave up (its timeout) and closed the connection: nothing to answer
    } finally {
      exchange.close();
    }
  }

  @Override
  public void close() {
    closed.countDown();
    server.stop(0);
  }
}
