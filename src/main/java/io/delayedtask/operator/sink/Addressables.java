package io.delayedtask.operator.sink;

import io.delayedtask.operator.sink.Destinations.Resolution;
import io.delayedtask.operator.task.cache.LeanItemStore;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code sink.ref} to a Knative Addressable (docs/reference.md, "Delivering to a service"): an
 * object of a kind Knative marks addressable, in the task's namespace only, whose {@code
 * status.address.url} is read from an informer, so an attempt costs no request.
 *
 * <p>Which kinds: the operator reads Addressables through a ClusterRole that aggregates the roles
 * labelled {@code duck.knative.dev/addressable: "true"}, which grants it list on exactly the kinds
 * Knative (or an administrator) marks addressable. So a kind is an Addressable when the API server
 * serves it (discovery) and a SelfSubjectAccessReview says the operator may list it in the task's
 * namespace; the built-in groups (the core group, those without a dot, {@code *.k8s.io}) and the
 * operator's own {@code delayedtask.io}, whose kinds the operator lists for reasons of its own,
 * never are. Both answers come from a thread of this class, never a reconcile thread: until they
 * come a kind is {@link RefKinds.Verdict.NotKnownYet}; they are asked again after {@link #RECHECK}.
 *
 * <p>An informer is started only for an Addressable kind, never waited for (an attempt before its
 * first list is a retry), kept once started (a slow first list is never repeated from scratch), and
 * keeps of each object its name, namespace and {@code status.address} only. It watches every
 * namespace when the operator may list the kind everywhere, else the task's namespace.
 */
public final class Addressables implements AddressableDirectory, RefKinds, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Addressables.class);

  /** How long a verdict stands before it is asked again (a Knative installed, a label removed). */
  static final Duration RECHECK = Duration.ofSeconds(60);

  /** At most this many kinds' verdicts are kept; more are forgotten and asked again. */
  private static final int MAX_VERDICTS = 1024;

  private static final String ALL_NAMESPACES = "";
  static final String ADDRESSABLE_LABEL = "duck.knative.dev/addressable: \"true\"";

  private final KubernetesClient client;
  private final ExecutorService asking =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "addressable-kinds");
            thread.setDaemon(true);
            return thread;
          });

  /** Verdicts by apiVersion, kind and namespace, with when they were given. */
  private final Map<Key, Known> known = new ConcurrentHashMap<>();

  private final Map<Key, Boolean> beingAsked = new ConcurrentHashMap<>();

  /**
   * Informers by apiVersion, kind and namespace ({@link #ALL_NAMESPACES} for one watching every
   * namespace).
   */
  private final Map<Key, SharedIndexInformer<GenericKubernetesResource>> informers =
      new ConcurrentHashMap<>();

  private record Key(String apiVersion, String kind, String namespace) {}

  /**
   * A verdict; for an Addressable, its resource and whether the operator may list it everywhere.
   */
  private record Known(
      Verdict verdict, long atNanos, ResourceDefinitionContext resource, boolean everywhere) {}

  public Addressables(KubernetesClient client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  @Override
  public Verdict verdict(String namespace, String apiVersion, String kind) {
    Optional<String> builtIn = builtIn(apiVersion, kind);
    if (builtIn.isPresent()) {
      return new Verdict.Refused(builtIn.get());
    }
    Key key = new Key(apiVersion, kind, namespace);
    Known found = known.get(key);
    if (found == null || System.nanoTime() - found.atNanos() > RECHECK.toNanos()) {
      ask(key);
    }
    return found == null ? new Verdict.NotKnownYet() : found.verdict();
  }

  /** Refused without asking: a kind of a built-in group or of the operator's own. */
  static Optional<String> builtIn(String apiVersion, String kind) {
    String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
    if (group.isEmpty()
        || !group.contains(".")
        || group.endsWith(".k8s.io")
        || group.equals("delayedtask.io")) {
      return Optional.of(
          "a sink.ref names a v1 Service or a Knative Addressable (a kind whose role is labelled "
              + ADDRESSABLE_LABEL
              + "), and "
              + kind
              + " of "
              + (group.isEmpty() ? "the core group" : group)
              + " is neither; name a Service (apiVersion: v1, kind: Service) or an Addressable such as a Knative Broker");
    }
    return Optional.empty();
  }

  private void ask(Key key) {
    if (beingAsked.putIfAbsent(key, true) != null) {
      return;
    }
    try {
      asking.execute(
          () -> {
            try {
              Known answer = answer(key);
              if (known.size() >= MAX_VERDICTS) {
                known.clear();
              }
              known.put(key, answer);
            } catch (KubernetesClientException e) {
              LOG.info(
                  "could not tell whether {} ({}) is a Knative Addressable: {}",
                  key.kind(),
                  key.apiVersion(),
                  e.getMessage());
            } finally {
              beingAsked.remove(key);
            }
          });
    } catch (RejectedExecutionException e) {
      beingAsked.remove(key); // closed
    }
  }

  /** Discovery, then whether the operator may list the kind (in the namespace; everywhere). */
  private Known answer(Key key) {
    long now = System.nanoTime();
    APIResourceList served = client.getApiResources(key.apiVersion());
    Optional<APIResource> resource =
        served == null || served.getResources() == null
            ? Optional.empty()
            : served.getResources().stream()
                .filter(r -> key.kind().equals(r.getKind()) && !r.getName().contains("/"))
                .findFirst();
    if (resource.isEmpty()) {
      return new Known(
          new Verdict.Refused(
              "the API server serves no kind "
                  + key.kind()
                  + " in "
                  + key.apiVersion()
                  + "; install the CRD (Knative) that defines it, or fix the ref"),
          now,
          null,
          false);
    }
    String group = key.apiVersion().substring(0, key.apiVersion().indexOf('/'));
    String version = key.apiVersion().substring(key.apiVersion().indexOf('/') + 1);
    String plural = resource.get().getName();
    if (!Boolean.TRUE.equals(resource.get().getNamespaced())
        || !mayList(group, plural, key.namespace())) {
      return new Known(
          new Verdict.Refused(
              "it is no Knative Addressable: the operator reads only the kinds whose "
                  + "roles are labelled "
                  + ADDRESSABLE_LABEL
                  + " (through its aggregated ClusterRole), and "
                  + plural
                  + "."
                  + group
                  + " is not among them; name a Service or a Knative Addressable, or have the cluster's "
                  + "administrators label a ClusterRole granting get, list and watch on it"),
          now,
          null,
          false);
    }
    ResourceDefinitionContext context =
        new ResourceDefinitionContext.Builder()
            .withGroup(group)
            .withVersion(version)
            .withKind(key.kind())
            .withPlural(plural)
            .withNamespaced(true)
            .build();
    return new Known(new Verdict.Addressable(), now, context, mayList(group, plural, null));
  }

  private boolean mayList(String group, String plural, String namespace) {
    var review =
        new SelfSubjectAccessReviewBuilder()
            .withNewSpec()
            .withNewResourceAttributes()
            .withGroup(group)
            .withResource(plural)
            .withVerb("list")
            .withNamespace(namespace)
            .endResourceAttributes()
            .endSpec()
            .build();
    var answer = client.authorization().v1().selfSubjectAccessReview().create(review);
    return answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
  }

  /**
   * The URL of the Addressable {@code apiVersion}/{@code kind} named {@code name} in {@code
   * namespace}, with {@code pathAndQuery} appended; or why there is none (a kind that is no
   * Addressable: never; not known yet, no such object, no address yet: a retry).
   */
  @Override
  public Resolution resolve(
      String namespace, String apiVersion, String kind, String name, String pathAndQuery) {
    String what = kind + " " + name + " (" + apiVersion + ") in namespace " + namespace;
    Verdict verdict = verdict(namespace, apiVersion, kind);
    if (verdict instanceof Verdict.Refused refused) {
      return new Resolution.Unresolvable(
          "sink.ref " + apiVersion + " " + kind + ": " + refused.why(), false);
    }
    Known known = this.known.get(new Key(apiVersion, kind, namespace));
    if (!(verdict instanceof Verdict.Addressable) || known == null || known.resource() == null) {
      return new Resolution.Unresolvable(
          "the operator is still checking whether "
              + kind
              + " ("
              + apiVersion
              + ") is a Knative Addressable",
          true);
    }
    SharedIndexInformer<GenericKubernetesResource> informer =
        informer(
            known.resource(), apiVersion, kind, known.everywhere() ? ALL_NAMESPACES : namespace);
    if (!informer.hasSynced()) {
      return new Resolution.Unresolvable(
          "the operator is still listing the " + kind + " (" + apiVersion + ") objects", true);
    }
    GenericKubernetesResource found =
        informer.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name));
    if (found == null) {
      return new Resolution.Unresolvable(what + " not found", true);
    }
    Optional<String> address = address(found);
    if (address.isEmpty()) {
      return new Resolution.Unresolvable(
          what + " has no address yet (status.address.url is not set)", true);
    }
    String base = address.get();
    String url =
        pathAndQuery.isEmpty()
            ? base
            : (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + pathAndQuery;
    try {
      URI parsed = new URI(url);
      if (parsed.getHost() == null
          || !("http".equals(parsed.getScheme()) || "https".equals(parsed.getScheme()))) {
        return new Resolution.Unresolvable(
            what + " has the address '" + base + "', not an http:// or https:// URL", true);
      }
      return new Resolution.Resolved(parsed, Optional.empty(), false, false);
    } catch (URISyntaxException e) {
      return new Resolution.Unresolvable(
          what
              + " has the address '"
              + base
              + "', which with sink.uri '"
              + pathAndQuery
              + "' is not a URL: "
              + e.getReason(),
          false);
    }
  }

  @SuppressWarnings("unchecked")
  private static Optional<String> address(GenericKubernetesResource resource) {
    Object status = resource.getAdditionalProperties().get("status");
    if (!(status instanceof Map<?, ?> statusMap)
        || !(statusMap.get("address") instanceof Map<?, ?> address)) {
      return Optional.empty();
    }
    return Optional.ofNullable(((Map<String, Object>) address).get("url"))
        .map(Object::toString)
        .filter(url -> !url.isBlank());
  }

  /**
   * What the cache keeps of an Addressable: its name, namespace and status.address, nothing else.
   */
  static void trim(GenericKubernetesResource resource) {
    ObjectMeta metadata = resource.getMetadata();
    if (metadata != null) {
      ObjectMeta lean = new ObjectMeta();
      lean.setName(metadata.getName());
      lean.setNamespace(metadata.getNamespace());
      lean.setResourceVersion(metadata.getResourceVersion());
      resource.setMetadata(lean);
    }
    Object status = resource.getAdditionalProperties().get("status");
    Map<String, Object> kept = new HashMap<>();
    if (status instanceof Map<?, ?> statusMap && statusMap.get("address") != null) {
      kept.put("address", statusMap.get("address"));
    }
    resource.getAdditionalProperties().clear();
    resource.getAdditionalProperties().put("status", kept);
  }

  /** The informer of this kind for {@code namespace}, started (never waited for) the first time. */
  private SharedIndexInformer<GenericKubernetesResource> informer(
      ResourceDefinitionContext resource, String apiVersion, String kind, String namespace) {
    return informers.computeIfAbsent(
        new Key(apiVersion, kind, namespace),
        key -> {
          var resources = client.genericKubernetesResources(resource);
          SharedIndexInformer<GenericKubernetesResource> informer =
              namespace.equals(ALL_NAMESPACES)
                  ? resources.inAnyNamespace().runnableInformer(0)
                  : resources.inNamespace(namespace).runnableInformer(0);
          informer.itemStore(LeanItemStore.trimming(Addressables::trim));
          // Retried with the informer's own backoff, first list included: never started over from
          // scratch.
          informer.exceptionHandler((started, error) -> true);
          informer.start();
          LOG.info(
              "reading {} ({}) addresses from an informer{}",
              kind,
              apiVersion,
              namespace.equals(ALL_NAMESPACES) ? "" : " in namespace " + namespace);
          return informer;
        });
  }

  @Override
  public void close() {
    asking.shutdownNow();
    informers.values().forEach(SharedIndexInformer::stop);
    informers.clear();
  }
}
