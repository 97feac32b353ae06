package io.delayedtask.operator.config;

import java.util.List;
import java.util.Objects;

/**
 * The sink delivery's settings (shared/API.md, the DELAYEDTASK_SINK_* variables).
 *
 * @param allowedUriPrefixes  DELAYEDTASK_SINK_ALLOWED_URIS: prefixes an absolute sink.uri may start with
 * @param clusterDomain       DELAYEDTASK_SINK_CLUSTER_DOMAIN, default cluster.local
 * @param serviceAccount      DELAYEDTASK_SINK_SERVICE_ACCOUNT, default delayedtask-sender
 * @param maxInFlight         DELAYEDTASK_SINK_MAX_IN_FLIGHT, default 256
 * @param maxInFlightPerHost  DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST, default 32
 */
public record SinkConfig(List<String> allowedUriPrefixes, String clusterDomain, String serviceAccount,
    int maxInFlight, int maxInFlightPerHost) {
  public static final String ALLOWED_URIS = "DELAYEDTASK_SINK_ALLOWED_URIS";
  public static final String CLUSTER_DOMAIN = "DELAYEDTASK_SINK_CLUSTER_DOMAIN";
  public static final String SERVICE_ACCOUNT = "DELAYEDTASK_SINK_SERVICE_ACCOUNT";
  public static final String MAX_IN_FLIGHT = "DELAYEDTASK_SINK_MAX_IN_FLIGHT";
  public static final String MAX_IN_FLIGHT_PER_HOST = "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST";

  public SinkConfig {
    allowedUriPrefixes = List.copyOf(allowedUriPrefixes);
    Objects.requireNonNull(clusterDomain, "clusterDomain");
    Objects.requireNonNull(serviceAccount, "serviceAccount");
  }

  public static SinkConfig defaults() {
    return new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 256, 32);
  }

  /** Whether an absolute sink URI is allowed: it starts with one of the prefixes. */
  public boolean allows(String absoluteUri) {
    return allowedUriPrefixes.stream().anyMatch(absoluteUri::startsWith);
  }
}
