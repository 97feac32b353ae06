package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a sink points (shared/API.md; Knative's Destination shape): a {@code v1} Service in the
 * task's namespace, with {@code uri} as path and query, or an absolute {@code uri}. Resolving a
 * Service reads it once, so the sender can connect to its clusterIP (or ExternalName) while the
 * Host header and TLS name stay the Service's DNS name. Whether an absolute uri is allowed
 * (DELAYEDTASK_SINK_ALLOWED_URIS) is the caller's check; where the address leads, the sender's guard.
 */
public final class Destinations {
  private static final int DEFAULT_HTTP_PORT = 80;

  private final KubernetesClient client;
  private final String clusterDomain;
  private final Addressables addressables;

  public Destinations(KubernetesClient client, SinkConfig config) {
    this.client = Objects.requireNonNull(client, "client");
    this.clusterDomain = config.clusterDomain();
    this.addressables = new Addressables(client);
  }

  /** {@code sink.ref}: a {@code v1} Service, or any other kind as a Knative Addressable ({@link Addressables}). */
  public record ServiceRef(String apiVersion, String kind, String name) {
    public ServiceRef {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The outcome of resolving a sink. */
  public sealed interface Resolution {
    /**
     * @param url         where to POST
     * @param connectHost what to resolve and connect to instead of the URL's host (a clusterIP or
     *                    an ExternalName's name); empty for a headless Service or an absolute uri
     */
    record Resolved(URI url, Optional<String> connectHost) implements Resolution {}

    /**
     * @param message   why, for the task's status
     * @param retryable whether the same sink may resolve later (a Service not created yet) or
     *                  never will without a change to the task or the Service
     */
    record Unresolvable(String message, boolean retryable) implements Resolution {}
  }

  public Resolution resolve(String namespace, Optional<ServiceRef> ref, Optional<String> uri) {
    if (ref.isEmpty()) {
      return uri.map(Destinations::absolute)
          .orElseGet(() -> new Resolution.Unresolvable("sink needs a ref or a uri", false));
    }
    ServiceRef service = ref.get();
    String pathAndQuery = uri.orElse("");
    if (!pathAndQuery.isEmpty() && !pathAndQuery.startsWith("/")) {
      return new Resolution.Unresolvable("with sink.ref, sink.uri is a path and must start with '/', not '"
          + pathAndQuery + "'", false);
    }
    if (!"v1".equals(service.apiVersion()) || !"Service".equals(service.kind())) {
      // Any other kind is a Knative Addressable: its status.address.url.
      return addressables.resolve(namespace, service.apiVersion(), service.kind(), service.name(), pathAndQuery);
    }
    Service found;
    try {
      found = client.services().inNamespace(namespace).withName(service.name()).get();
    } catch (KubernetesClientException e) {
      return new Resolution.Unresolvable("could not read Service " + service.name() + " in namespace " + namespace
          + " (HTTP " + e.getCode() + ")", true);
    }
    if (found == null) {
      return new Resolution.Unresolvable("Service " + service.name() + " not found in namespace " + namespace, true);
    }
    Optional<Integer> port = port(found);
    if (port.isEmpty()) {
      return new Resolution.Unresolvable("Service " + service.name() + " in namespace " + namespace
          + " has several ports and none named http: name the one to deliver to http", false);
    }
    String authority = service.name() + "." + namespace + ".svc." + clusterDomain
        + (port.get() == DEFAULT_HTTP_PORT ? "" : ":" + port.get());
    URI url;
    try {
      url = new URI("http://" + authority + pathAndQuery);
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable("sink.uri '" + pathAndQuery + "' is not a valid path: " + e.getReason(), false);
    }
    return new Resolution.Resolved(url, connectHost(found));
  }

  private static Resolution absolute(String uri) {
    try {
      URI url = new URI(uri);
      String scheme = url.getScheme();
      if (url.getHost() == null || !("http".equals(scheme) || "https".equals(scheme))) {
        return new Resolution.Unresolvable("sink.uri '" + uri + "' is not an absolute http:// or https:// URL", false);
      }
      return new Resolution.Resolved(url, Optional.empty());
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable("sink.uri '" + uri + "' is not a valid URL: " + e.getReason(), false);
    }
  }

  /** The port named http, else the only port; 80 when the Service lists none (ExternalName, some headless ones). */
  private static Optional<Integer> port(Service service) {
    List<ServicePort> ports = Optional.ofNullable(service.getSpec().getPorts()).orElse(List.of());
    if (ports.isEmpty()) {
      return Optional.of(DEFAULT_HTTP_PORT);
    }
    Optional<ServicePort> named = ports.stream().filter(p -> "http".equals(p.getName())).findFirst();
    if (named.isPresent()) {
      return Optional.of(named.get().getPort());
    }
    return ports.size() == 1 ? Optional.of(ports.get(0).getPort()) : Optional.empty();
  }

  /**
   * The name or IP to connect to: an ExternalName's name, else the clusterIP; nothing for a
   * headless Service (its DNS name resolves to the pods).
   */
  private static Optional<String> connectHost(Service service) {
    if ("ExternalName".equals(service.getSpec().getType())) {
      return Optional.ofNullable(service.getSpec().getExternalName()).filter(name -> !name.isBlank());
    }
    return Optional.ofNullable(service.getSpec().getClusterIP())
        .filter(ip -> !ip.isBlank() && !"None".equals(ip));
  }
}
