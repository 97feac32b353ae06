package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns a task's sink (Knative's Destination: a Service ref with a path, or an absolute URI) into
 * the URL to POST to and the name to resolve for it. A Service resolves to {@code
 * http://<name>.<namespace>.svc.<cluster domain>} (with its port when that is not 80), and is
 * reached at its clusterIP, or its ExternalName's name: the same place cluster DNS would give, also
 * from an operator that runs outside the cluster. The address finally connected to is checked by
 * the sender's guard, whatever the Service says.
 */
public final class Destinations {
  private final KubernetesClient client;
  private final SinkConfig config;

  public Destinations(KubernetesClient client, SinkConfig config) {
    this.client = client;
    this.config = config;
  }

  /** A {@code v1} Service named by a task, in the task's namespace. */
  public record ServiceRef(String apiVersion, String kind, String name) {}

  /** Where an attempt goes, or why it cannot go. */
  public sealed interface Resolution {
    /** POST to {@code url}; resolve {@code connectHost} instead of its host when present. */
    record Resolved(URI url, Optional<String> connectHost) implements Resolution {}

    /** No URL: {@code message} says why and how to fix it; {@code retryable} when waiting may fix it. */
    record Unresolvable(String message, boolean retryable) implements Resolution {}
  }

  public Resolution resolve(String namespace, Optional<ServiceRef> ref, Optional<String> uri) {
    if (ref.isEmpty()) {
      try {
        return new Resolution.Resolved(new URI(uri.orElseThrow()), Optional.empty());
      } catch (URISyntaxException e) {
        return new Resolution.Unresolvable("sink.uri is not a URL: " + e.getReason(), false);
      }
    }
    String name = ref.get().name();
    Service service = client.services().inNamespace(namespace).withName(name).get();
    if (service == null) {
      return new Resolution.Unresolvable("Service " + name + " not found in namespace " + namespace, true);
    }
    Optional<Integer> port = port(service);
    if (port.isEmpty()) {
      return new Resolution.Unresolvable("Service " + name + " has several ports and none named http; name the one "
          + "to call http", false);
    }
    String host = name + "." + namespace + ".svc." + config.clusterDomain();
    String path = uri.orElse("/");
    try {
      URI url = new URI("http://" + host + (port.get() == 80 ? "" : ":" + port.get()) + path);
      return new Resolution.Resolved(url, connectHost(service));
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable("sink.uri '" + path + "' is not a path: " + e.getReason(), false);
    }
  }

  /** The port named http, else the only one; 80 for an ExternalName Service without ports. */
  private static Optional<Integer> port(Service service) {
    List<ServicePort> ports = service.getSpec() == null || service.getSpec().getPorts() == null ? List.of()
        : service.getSpec().getPorts();
    if (ports.isEmpty()) {
      return Optional.of(80);
    }
    Optional<ServicePort> http = ports.stream().filter(p -> "http".equals(p.getName())).findFirst();
    if (http.isPresent()) {
      return Optional.of(http.get().getPort());
    }
    return ports.size() == 1 ? Optional.of(ports.get(0).getPort()) : Optional.empty();
  }

  /** Its clusterIP, or its ExternalName; empty for a headless Service (its DNS name is resolved). */
  private static Optional<String> connectHost(Service service) {
    var spec = service.getSpec();
    if (spec == null) {
      return Optional.empty();
    }
    if ("ExternalName".equals(spec.getType())) {
      return Optional.ofNullable(spec.getExternalName());
    }
    String clusterIp = spec.getClusterIP();
    return clusterIp == null || clusterIp.isEmpty() || Objects.equals(clusterIp, "None") ? Optional.empty()
        : Optional.of(clusterIp);
  }
}
