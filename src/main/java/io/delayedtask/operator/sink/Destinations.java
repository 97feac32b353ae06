package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.AllowedUris;
import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a sink points (docs/reference.md; Knative's Destination shape): a {@code v1} Service in the
 * task's namespace, with {@code uri} as path and query, or an absolute {@code uri}. A Service is
 * read from the {@link ServiceDirectory} (informers, no request per attempt). What the sender may
 * connect to is a {@link Reach}, judged again when it connects: a Service's verified endpoints
 * (never its name or clusterIP, which lead to whatever endpoints exist when the packet arrives), or
 * a name to resolve (an ExternalName, an allowed URL); the Host header and TLS name stay the URL's.
 *
 * <p>What a destination may reach is decided here, before the sender's address guard:
 *
 * <ul>
 *   <li>an absolute uri only when an entry of DELAYEDTASK_SINK_ALLOWED_URIS allows it;
 *   <li>a {@code ref} reaches only the task's namespace: an ExternalName Service only when the URL
 *       it yields ({@code http://<externalName>:<port><uri>}) is allowed as an absolute uri would
 *       be, and a Service only when every address of its EndpointSlices is verified as a Pod of the
 *       task's namespace by what a slice's writer cannot forge ({@link EndpointCheck}: the Pod its
 *       targetRef names exists there with that address), here and again at the moment of
 *       connecting;
 *   <li>loopback only when the entry that allowed the URL names that loopback host ({@link
 *       Resolution.Resolved#loopbackAllowed}).
 * </ul>
 */
public final class Destinations {
  private static final int DEFAULT_HTTP_PORT = 80;
  private static final String REF_RULE = EndpointCheck.REF_RULE;
  private static final String ADDRESSABLE_RULE =
      "an Addressable's address is held to the walls of an absolute URL";

  /** A Service's name: an RFC 1123 DNS label. */
  private static final Pattern SERVICE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private final ServiceDirectory services;
  private final String clusterDomain;
  private final AllowedUris allowlist;
  private final AddressableDirectory addressables;

  public Destinations(
      ServiceDirectory services, AddressableDirectory addressables, SinkConfig config) {
    this.services = Objects.requireNonNull(services, "services");
    this.clusterDomain = config.clusterDomain();
    this.allowlist = config.allowlist();
    this.addressables = Objects.requireNonNull(addressables, "addressables");
  }

  /**
   * {@code sink.ref}: a {@code v1} Service, or any other kind as a Knative Addressable ({@link
   * Addressables}).
   */
  public record ServiceRef(String apiVersion, String kind, String name) {
    public ServiceRef {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The outcome of resolving a sink. */
  public sealed interface Resolution {
    /**
     * @param url where to POST (the status's sinkUri; a Service's name, not an address)
     * @param reach what the sender may connect to, judged when it connects
     * @param inCluster a Service of the task's namespace that is not an ExternalName: the only
     *     place a token may go over plain http
     */
    record Resolved(URI url, Reach reach, boolean inCluster) implements Resolution {
      public Resolved {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(reach, "reach");
      }

      /**
       * A URL whose host is resolved when connecting, which no entry of
       * DELAYEDTASK_SINK_ALLOWED_URIS allowed (so never a name of the cluster's Services).
       */
      public Resolved(
          URI url, Optional<String> connectHost, boolean loopbackAllowed, boolean inCluster) {
        this(url, new Reach.ByName(connectHost, loopbackAllowed, false), inCluster);
      }

      /**
       * The reach lets a loopback address through (an entry naming that loopback host allowed the
       * URL).
       */
      public boolean loopbackAllowed() {
        return reach instanceof Reach.ByName byName && byName.loopbackAllowed();
      }
    }

    /**
     * @param message why, for the task's status
     * @param retryable whether the same sink may resolve later (a Service not created yet) or never
     *     will without a change to the task or the Service
     */
    record Unresolvable(String message, boolean retryable) implements Resolution {}
  }

  public Resolution resolve(String namespace, Optional<ServiceRef> ref, Optional<String> uri) {
    if (ref.isEmpty()) {
      return uri.map(absolute -> absolute(namespace, absolute))
          .orElseGet(() -> new Resolution.Unresolvable("sink needs a ref or a uri", false));
    }
    ServiceRef service = ref.get();
    String pathAndQuery = uri.orElse("");
    if (!pathAndQuery.isEmpty() && !pathAndQuery.startsWith("/")) {
      return new Resolution.Unresolvable(
          "with sink.ref, sink.uri is a path and must start with '/', not '" + pathAndQuery + "'",
          false);
    }
    if (!"v1".equals(service.apiVersion()) || !"Service".equals(service.kind())) {
      // Any other kind is a Knative Addressable: its status.address.url.
      return addressable(
          namespace,
          service,
          addressables.resolve(
              namespace, service.apiVersion(), service.kind(), service.name(), pathAndQuery));
    }
    if (!services.knows(namespace)) {
      return new Resolution.Unresolvable(
          "the operator has not listed the Services of namespace " + namespace + " yet", true);
    }
    Optional<Service> found = services.service(namespace, service.name());
    if (found.isEmpty()) {
      return new Resolution.Unresolvable(
          "Service " + service.name() + " not found in namespace " + namespace, true);
    }
    Optional<ServicePort> servicePort = servicePort(found.get());
    Optional<Integer> port = port(found.get());
    if (port.isEmpty()) {
      return new Resolution.Unresolvable(
          "Service "
              + service.name()
              + " in namespace "
              + namespace
              + " has several ports and none named http: name the one to deliver to http",
          false);
    }
    String authority =
        service.name() + "." + namespace + ".svc." + clusterDomain + portSuffix(port.get());
    URI url;
    try {
      url = new URI("http://" + authority + pathAndQuery);
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable(
          "sink.uri '" + pathAndQuery + "' is not a valid path: " + e.getReason(), false);
    }
    if ("ExternalName".equals(found.get().getSpec().getType())) {
      return externalName(namespace, service.name(), found.get(), port.get(), pathAndQuery, url);
    }
    // Judged here for a clear message early, and again by the sender when it connects
    // (Reach.ServiceEndpoints).
    Reach.ServiceEndpoints endpoints =
        new Reach.ServiceEndpoints(
            services, namespace, service.name(), servicePort.map(ServicePort::getName).orElse(""));
    Optional<String> unverified = endpoints.judge().unverified();
    if (unverified.isPresent()) {
      return new Resolution.Unresolvable(unverified.get(), false);
    }
    return new Resolution.Resolved(url, endpoints, true);
  }

  /**
   * An ExternalName leads out of the namespace: followed only when the URL it yields is allowed as
   * an absolute uri would be; loopback then only through an entry naming that loopback host.
   */
  private Resolution externalName(
      String namespace, String name, Service service, int port, String pathAndQuery, URI url) {
    String externalName =
        Optional.ofNullable(service.getSpec().getExternalName()).orElse("").trim();
    if (externalName.isEmpty()) {
      return new Resolution.Unresolvable(
          "Service " + name + " in namespace " + namespace + " is an ExternalName without a name",
          false);
    }
    String host = externalName.contains(":") ? "[" + externalName + "]" : externalName;
    String yields = "http://" + host + portSuffix(port) + pathAndQuery;
    Optional<AllowedUris.Entry> entry = allowlist.entryAllowing(yields, namespace);
    if (entry.isEmpty()) {
      return new Resolution.Unresolvable(
          REF_RULE
              + ": Service "
              + name
              + " is an ExternalName for "
              + externalName
              + ", and no entry of the operator's "
              + SinkConfig.ALLOWED_URIS
              + " allows the URL it yields, "
              + yields
              + "; point sink.ref at a Service of this namespace, or ask the operator's administrators to allow that URL",
          false);
    }
    return new Resolution.Resolved(
        url, new Reach.ByName(Optional.of(externalName), entry.get().namesLoopback(), true), false);
  }

  /**
   * An Addressable's URL is whatever its status says, and whoever may write that status chooses it
   * (Knative's namespaced edit roles grant every verb on its resources). So it is held to the walls
   * of an absolute URL: used only when it names a Service of the task's namespace ({@code
   * <name>.<namespace>.svc.<cluster domain>}, then resolved by the Service rules, as a {@code
   * sink.ref} to that Service with the URL's path would be, keeping the URL's scheme and port), or
   * when an entry of DELAYEDTASK_SINK_ALLOWED_URIS allows it for the task's namespace; loopback
   * only through an entry naming that loopback host.
   */
  private Resolution addressable(String namespace, ServiceRef ref, Resolution resolution) {
    if (!(resolution instanceof Resolution.Resolved resolved)) {
      return resolution;
    }
    URI url = resolved.url();
    Optional<String> service = serviceOfNamespace(url, namespace);
    if (service.isPresent()) {
      String pathAndQuery =
          Optional.ofNullable(url.getRawPath()).orElse("")
              + (url.getRawQuery() == null ? "" : "?" + url.getRawQuery());
      Resolution byService =
          resolve(
              namespace,
              Optional.of(new ServiceRef("v1", "Service", service.get())),
              pathAndQuery.isEmpty() ? Optional.empty() : Optional.of(pathAndQuery));
      if (byService instanceof Resolution.Resolved viaService
          && ("https".equals(url.getScheme()) || url.getPort() >= 0)) {
        try {
          URI kept =
              new URI(
                  url.getScheme(),
                  null,
                  viaService.url().getHost(),
                  url.getPort(),
                  viaService.url().getPath(),
                  viaService.url().getQuery(),
                  null);
          return new Resolution.Resolved(kept, viaService.reach(), viaService.inCluster());
        } catch (URISyntaxException e) {
          return new Resolution.Unresolvable(
              ref.kind()
                  + " "
                  + ref.name()
                  + " has the address '"
                  + url
                  + "', which is not a URL: "
                  + e.getReason(),
              false);
        }
      }
      return byService;
    }
    String text = url.toString();
    Optional<AllowedUris.Entry> entry = allowlist.entryAllowing(text, namespace);
    if (entry.isEmpty()) {
      String why = allowlist.whyRefused(text, namespace).map(reason -> ": " + reason).orElse("");
      return new Resolution.Unresolvable(
          ADDRESSABLE_RULE
              + ": "
              + ref.kind()
              + " "
              + ref.name()
              + " ("
              + ref.apiVersion()
              + ") has the address "
              + text
              + ", which is no Service of namespace "
              + namespace
              + " (<name>."
              + namespace
              + ".svc."
              + clusterDomain
              + "), and no entry of the operator's "
              + SinkConfig.ALLOWED_URIS
              + " allows it"
              + why
              + "; point the Addressable at this namespace, or ask the "
              + "operator's administrators to allow that URL (an entry may hold {namespace})",
          false);
    }
    return new Resolution.Resolved(
        url, new Reach.ByName(Optional.empty(), entry.get().namesLoopback(), true), false);
  }

  /**
   * The Service's name when {@code url}'s host is {@code <name>.<namespace>.svc.<cluster domain>}.
   */
  private Optional<String> serviceOfNamespace(URI url, String namespace) {
    String host = Optional.ofNullable(url.getHost()).orElse("").toLowerCase(java.util.Locale.ROOT);
    if (host.endsWith(".")) {
      host = host.substring(0, host.length() - 1);
    }
    String suffix = "." + namespace + ".svc." + clusterDomain.toLowerCase(java.util.Locale.ROOT);
    if (!host.endsWith(suffix)) {
      return Optional.empty();
    }
    String name = host.substring(0, host.length() - suffix.length());
    return SERVICE_NAME.matcher(name).matches() ? Optional.of(name) : Optional.empty();
  }

  private Resolution absolute(String namespace, String uri) {
    URI url;
    try {
      url = new URI(uri);
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable(
          "sink.uri '" + uri + "' is not a valid URL: " + e.getReason(), false);
    }
    String scheme = url.getScheme();
    if (url.getHost() == null || !("http".equals(scheme) || "https".equals(scheme))) {
      return new Resolution.Unresolvable(
          "sink.uri '" + uri + "' is not an absolute http:// or https:// URL", false);
    }
    // The validator refused it already; checked again, as the allowlist may have changed since.
    Optional<AllowedUris.Entry> entry = allowlist.entryAllowing(uri, namespace);
    if (entry.isEmpty()) {
      return new Resolution.Unresolvable(
          "sink.uri '"
              + uri
              + "' is not allowed by any entry of the operator's "
              + SinkConfig.ALLOWED_URIS
              + allowlist.whyRefused(uri, namespace).map(why -> ": " + why).orElse(""),
          false);
    }
    return new Resolution.Resolved(
        url, new Reach.ByName(Optional.empty(), entry.get().namesLoopback(), true), false);
  }

  private static String portSuffix(int port) {
    return port == DEFAULT_HTTP_PORT ? "" : ":" + port;
  }

  /**
   * The port named http, else the only port; empty when it has none or several without one named
   * http.
   */
  private static Optional<ServicePort> servicePort(Service service) {
    List<ServicePort> ports = Optional.ofNullable(service.getSpec().getPorts()).orElse(List.of());
    Optional<ServicePort> named =
        ports.stream().filter(p -> "http".equals(p.getName())).findFirst();
    return named.isPresent() || ports.size() != 1 ? named : Optional.of(ports.get(0));
  }

  /**
   * The port named http, else the only port; 80 when the Service lists none (ExternalName, some
   * headless ones).
   */
  private static Optional<Integer> port(Service service) {
    List<ServicePort> ports = Optional.ofNullable(service.getSpec().getPorts()).orElse(List.of());
    if (ports.isEmpty()) {
      return Optional.of(DEFAULT_HTTP_PORT);
    }
    Optional<ServicePort> named =
        ports.stream().filter(p -> "http".equals(p.getName())).findFirst();
    if (named.isPresent()) {
      return Optional.of(named.get().getPort());
    }
    return ports.size() == 1 ? Optional.of(ports.get(0).getPort()) : Optional.empty();
  }
}
