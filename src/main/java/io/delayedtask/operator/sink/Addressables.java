package io.delayedtask.operator.sink;

import io.delayedtask.operator.sink.Destinations.Resolution;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code sink.ref} to a Knative Addressable (docs/reference.md, "Delivering to a service"): any
 * object, of the {@code apiVersion} and {@code kind} the task writes, whose {@code
 * status.address.url} is set (a Knative {@code Service}, a {@code Broker}, a {@code Channel}, ...),
 * in the task's namespace only. Read from an informer, one per kind, started when a task first names
 * that kind (fabric8's generic client, which finds the kind's resource through discovery), so an
 * attempt costs no request: the address is the one the cache holds at the attempt.
 *
 * <p>The operator reads Addressables through a ClusterRole that aggregates the roles labelled
 * {@code duck.knative.dev/addressable: "true"}. Watching every namespace, an informer lists the kind
 * cluster-wide; where that is forbidden (the operator bound by RoleBindings in the namespaces it
 * watches) it falls back to one informer per namespace of the kind.
 */
public final class Addressables implements AddressableDirectory, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Addressables.class);
  /** How long a first attempt waits for a new informer's first list. */
  static final Duration FIRST_SYNC = Duration.ofSeconds(10);
  private static final String ALL_NAMESPACES = "";

  private final KubernetesClient client;
  /** Informers by apiVersion, kind and namespace ({@link #ALL_NAMESPACES} for one watching every namespace). */
  private final Map<Key, SharedIndexInformer<GenericKubernetesResource>> informers = new ConcurrentHashMap<>();
  /** The kinds the operator may not list cluster-wide: read per namespace. */
  private final Map<Key, Boolean> perNamespace = new ConcurrentHashMap<>();

  private record Key(String apiVersion, String kind, String namespace) {}

  public Addressables(KubernetesClient client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  /**
   * The URL of the Addressable {@code apiVersion}/{@code kind} named {@code name} in {@code namespace},
   * with {@code pathAndQuery} appended; or why there is none (no such object, no address yet: a
   * retry; a kind the API server does not serve or the operator may not read: named with the fix).
   */
  @Override
  public Resolution resolve(String namespace, String apiVersion, String kind, String name, String pathAndQuery) {
    String what = kind + " " + name + " (" + apiVersion + ") in namespace " + namespace;
    SharedIndexInformer<GenericKubernetesResource> informer;
    try {
      informer = informer(apiVersion, kind, namespace);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        return new Resolution.Unresolvable("the operator may not read " + kind + " (" + apiVersion + "): grant it "
            + "get, list and watch through a ClusterRole labelled duck.knative.dev/addressable: \"true\" (Knative's "
            + "own addressable roles are)", false);
      }
      if (String.valueOf(e.getMessage()).contains("Could not find the metadata")) {
        return new Resolution.Unresolvable("the API server serves no kind " + kind + " in " + apiVersion
            + ": install the CRD (Knative) that defines it, or fix sink.ref", true);
      }
      return new Resolution.Unresolvable("could not read " + kind + " (" + apiVersion + ") objects: "
          + e.getMessage(), true);
    }
    GenericKubernetesResource found = informer.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name));
    if (found == null) {
      return new Resolution.Unresolvable(what + " not found", true);
    }
    Optional<String> address = address(found);
    if (address.isEmpty()) {
      return new Resolution.Unresolvable(what + " has no address yet (status.address.url is not set)", true);
    }
    String base = address.get();
    String url = pathAndQuery.isEmpty() ? base : (base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
        + pathAndQuery;
    try {
      URI parsed = new URI(url);
      if (parsed.getHost() == null || !("http".equals(parsed.getScheme()) || "https".equals(parsed.getScheme()))) {
        return new Resolution.Unresolvable(what + " has the address '" + base + "', not an http:// or https:// URL",
            true);
      }
      return new Resolution.Resolved(parsed, Optional.empty(), false, false);
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable(what + " has the address '" + base + "', which with sink.uri '"
          + pathAndQuery + "' is not a URL: " + e.getReason(), false);
    }
  }

  @SuppressWarnings("unchecked")
  private static Optional<String> address(GenericKubernetesResource resource) {
    Object status = resource.getAdditionalProperties().get("status");
    if (!(status instanceof Map<?, ?> statusMap) || !(statusMap.get("address") instanceof Map<?, ?> address)) {
      return Optional.empty();
    }
    return Optional.ofNullable(((Map<String, Object>) address).get("url")).map(Object::toString)
        .filter(url -> !url.isBlank());
  }

  private SharedIndexInformer<GenericKubernetesResource> informer(String apiVersion, String kind, String namespace) {
    Key cluster = new Key(apiVersion, kind, ALL_NAMESPACES);
    if (!perNamespace.containsKey(cluster)) {
      try {
        return informers.computeIfAbsent(cluster, this::start);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 403) {
          throw e;
        }
        LOG.info("may not list {} ({}) in every namespace: reading them per namespace", kind, apiVersion);
        perNamespace.put(cluster, true);
      }
    }
    return informers.computeIfAbsent(new Key(apiVersion, kind, namespace), this::start);
  }

  /** Starts an informer and waits for its first list; one that could not list is stopped and forgotten. */
  private SharedIndexInformer<GenericKubernetesResource> start(Key key) {
    var resources = client.genericKubernetesResources(key.apiVersion(), key.kind()); // discovery: throws if unknown
    SharedIndexInformer<GenericKubernetesResource> informer = key.namespace().equals(ALL_NAMESPACES)
        ? resources.inAnyNamespace().runnableInformer(0)
        : resources.inNamespace(key.namespace()).runnableInformer(0);
    informer.exceptionHandler((started, error) -> started); // retry a broken watch, not a first list that failed
    try {
      informer.start().toCompletableFuture().get(FIRST_SYNC.toMillis(), TimeUnit.MILLISECONDS);
      LOG.info("reading {} ({}) addresses from an informer{}", key.kind(), key.apiVersion(),
          key.namespace().equals(ALL_NAMESPACES) ? "" : " in namespace " + key.namespace());
      return informer;
    } catch (ExecutionException e) {
      informer.stop();
      throw e.getCause() instanceof KubernetesClientException k ? k
          : new KubernetesClientException("informer for " + key.kind() + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      informer.stop();
      throw new KubernetesClientException("no first list of " + key.kind() + " within " + FIRST_SYNC.toSeconds()
          + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      informer.stop();
      throw new KubernetesClientException("interrupted while starting the informer for " + key.kind());
    }
  }

  @Override
  public void close() {
    informers.values().forEach(SharedIndexInformer::stop);
    informers.clear();
  }
}
