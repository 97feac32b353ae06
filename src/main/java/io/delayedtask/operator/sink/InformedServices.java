package io.delayedtask.operator.sink;

import io.delayedtask.operator.task.cache.LeanItemStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Services, EndpointSlices and Pods of the watched namespaces, learned by informers (a list,
 * then a watch) that the operator starts once: resolving a {@code sink.ref}, and judging its
 * endpoints again at each connection, costs no request. All namespaces: one informer of each kind;
 * named namespaces: one of each per namespace (the chart's watchNamespaces install grants Roles
 * there only). An informer that cannot list (no RBAC yet, the API server away) keeps retrying;
 * until it has listed, {@link #knows} is false and a delivery to a {@code ref} in that namespace
 * waits (retried).
 *
 * <p>Pods are what an endpoint is verified by ({@link EndpointCheck}), and the most numerous
 * objects of a cluster, so their store keeps a lean copy of each: name, namespace, resourceVersion,
 * {@code spec.hostNetwork}, {@code status.phase} and the addresses ({@link #lean}), about 0.6 KB
 * where a whole Pod is 5 to 20 KB; they are listed in pages.
 */
public final class InformedServices implements ServiceDirectory, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(InformedServices.class);
  static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
  private static final String BY_SERVICE = "by-service";

  private final Map<String, Pair> byNamespace = new HashMap<>();
  private final Pair allNamespaces;

  private static final long POD_PAGE = 500;

  private record Pair(
      SharedIndexInformer<Service> services,
      SharedIndexInformer<EndpointSlice> slices,
      SharedIndexInformer<Pod> pods) {
    boolean synced() {
      return services.hasSynced() && slices.hasSynced() && pods.hasSynced();
    }
  }

  /**
   * Starts the informers (returns at once; they list in the background).
   *
   * @param namespaces the namespaces to watch; empty: all
   */
  public InformedServices(KubernetesClient client, Set<String> namespaces) {
    Objects.requireNonNull(client, "client");
    if (namespaces.isEmpty()) {
      allNamespaces =
          start(
              client.services().inAnyNamespace().runnableInformer(0),
              client.discovery().v1().endpointSlices().inAnyNamespace().runnableInformer(0),
              client.pods().inAnyNamespace().withLimit(POD_PAGE).runnableInformer(0));
    } else {
      allNamespaces = null;
      for (String namespace : namespaces) {
        byNamespace.put(
            namespace,
            start(
                client.services().inNamespace(namespace).runnableInformer(0),
                client.discovery().v1().endpointSlices().inNamespace(namespace).runnableInformer(0),
                client.pods().inNamespace(namespace).withLimit(POD_PAGE).runnableInformer(0)));
      }
    }
  }

  private static Pair start(
      SharedIndexInformer<Service> services,
      SharedIndexInformer<EndpointSlice> slices,
      SharedIndexInformer<Pod> pods) {
    // Without managedFields, as the task cache: a cluster's every Service and slice, with nothing
    // read from them.
    services.itemStore(LeanItemStore.withoutManagedFields());
    slices.itemStore(LeanItemStore.withoutManagedFields());
    pods.itemStore(new LeanPods());
    slices.addIndexers(
        Map.of(
            BY_SERVICE,
            (Function<EndpointSlice, List<String>>)
                slice -> {
                  String service =
                      Optional.ofNullable(slice.getMetadata().getLabels())
                          .map(l -> l.get(SERVICE_NAME_LABEL))
                          .orElse(null);
                  return service == null
                      ? List.of()
                      : List.of(slice.getMetadata().getNamespace() + "/" + service);
                }));
    for (SharedIndexInformer<? extends HasMetadata> informer : List.of(services, slices, pods)) {
      // Keep listing until it works (RBAC granted later, the API server back): never give up.
      informer.exceptionHandler(
          (started, error) -> {
            LOG.warn(
                "Listing or watching {} failed, retrying: {}",
                informer.getApiTypeClass().getSimpleName(),
                error.getMessage());
            return true;
          });
      informer.start();
    }
    return new Pair(services, slices, pods);
  }

  /** A store of lean Pods ({@link #lean}). */
  private static final class LeanPods extends BasicItemStore<Pod> {
    LeanPods() {
      super(Cache::metaNamespaceKeyFunc);
    }

    @Override
    public Pod put(String key, Pod pod) {
      return super.put(key, lean(pod));
    }
  }

  /**
   * What an endpoint is verified by, and what the informer needs (name, namespace,
   * resourceVersion): nothing else of the Pod is kept.
   */
  static Pod lean(Pod pod) {
    ObjectMeta meta = pod.getMetadata();
    PodBuilder lean =
        new PodBuilder()
            .withNewMetadata()
            .withName(meta.getName())
            .withNamespace(meta.getNamespace())
            .withResourceVersion(meta.getResourceVersion())
            .endMetadata();
    if (pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork())) {
      lean.withNewSpec().withHostNetwork(true).endSpec();
    }
    if (pod.getStatus() != null) {
      lean.withNewStatus()
          .withPhase(pod.getStatus().getPhase())
          .withPodIP(pod.getStatus().getPodIP())
          .withPodIPs(pod.getStatus().getPodIPs())
          .endStatus();
    }
    return lean.build();
  }

  private Optional<Pair> of(String namespace) {
    return Optional.ofNullable(allNamespaces)
        .or(() -> Optional.ofNullable(byNamespace.get(namespace)));
  }

  @Override
  public boolean knows(String namespace) {
    return of(namespace).map(Pair::synced).orElse(false);
  }

  @Override
  public Optional<Service> service(String namespace, String name) {
    return of(namespace).map(pair -> pair.services().getStore().getByKey(namespace + "/" + name));
  }

  @Override
  public List<EndpointSlice> endpointSlices(String namespace, String service) {
    return of(namespace)
        .map(pair -> pair.slices().getIndexer().byIndex(BY_SERVICE, namespace + "/" + service))
        .map(ArrayList::new)
        .map(List::<EndpointSlice>copyOf)
        .orElse(List.of());
  }

  @Override
  public Optional<Pod> pod(String namespace, String name) {
    return of(namespace).map(pair -> pair.pods().getStore().getByKey(namespace + "/" + name));
  }

  @Override
  public void close() {
    List<Pair> pairs = new ArrayList<>(byNamespace.values());
    if (allNamespaces != null) {
      pairs.add(allNamespaces);
    }
    for (Pair pair : pairs) {
      pair.services().close();
      pair.slices().close();
      pair.pods().close();
    }
  }
}
