package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * What an operator serves on its loopback HTTP port: /healthz, /readyz and the /metrics reader
 * every test uses.
 */
public final class OperatorHttp {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private OperatorHttp() {}

  /** GET {@code path} on 127.0.0.1:{@code port}. */
  public static HttpResponse<String> get(int port, String path) {
    try {
      return HTTP.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
              .timeout(Duration.ofSeconds(5))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("nothing answers on 127.0.0.1:" + port + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The Prometheus text the operator serves now. */
  public static String metrics(int port) {
    return get(port, "/metrics").body();
  }

  /**
   * {@link #metric(String, String, String)} over a fresh scrape of the operator on {@code port}.
   */
  public static double metric(int port, String metric, String labelFilter) {
    return metric(metrics(port), metric, labelFilter);
  }

  /**
   * The sum of every sample of {@code metric} whose label set contains {@code labelFilter} (for
   * example {@code reason="clock_skew"}; empty: every sample); 0 when there is none.
   */
  public static double metric(String metricsText, String metric, String labelFilter) {
    double sum = 0;
    for (String line : metricsText.split("\n")) {
      boolean labelled =
          line.startsWith(metric + "{")
              && line.substring(0, line.indexOf('}') + 1).contains(labelFilter);
      boolean plain = line.startsWith(metric + " ") && labelFilter.isEmpty();
      if (labelled || plain) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }
}
