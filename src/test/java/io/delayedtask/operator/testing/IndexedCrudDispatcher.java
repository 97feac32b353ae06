package io.delayedtask.operator.testing;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.crud.AttributeType;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.HttpURLConnection;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * fabric8's CRUD store, with one object found through an index on (resource, namespace, name)
 * instead of a scan of the whole store.
 *
 * <p>Why: the stock {@link KubernetesCrudDispatcher} matches every stored object against each
 * request (and copies the whole store for every GET), so each create, read and update costs
 * O(objects). At 5,000 DelayedTasks it served about 30 writes per second, and the scale runs
 * measured that instead of the operator. Here a request that names one object in one namespace (the
 * operator's GETs, PUTs, PATCHes and the existence check of every POST) looks in its bucket only.
 * The index is complete for such a request: an object matches it only if its resource, namespace
 * and name attributes equal the request's, so the bucket holds every candidate, and each one is
 * still checked with the store's own {@code matches}. Everything else (lists, label selectors,
 * watches, deletes, the events sent to watchers) is the stock code.
 *
 * <p>The stock store changes its map under a lock of its own, which a subclass cannot reach. So
 * every request that writes takes {@link #storeLock} for writing around the stock handling, and an
 * indexed read takes it for reading: a read never sees the gap between the stock code removing an
 * object's old entry and this class indexing the new one.
 */
public final class IndexedCrudDispatcher extends KubernetesCrudDispatcher {
  private final Map<ObjectKey, List<AttributeSet>> byObject = new ConcurrentHashMap<>();
  private final ReadWriteLock storeLock = new ReentrantReadWriteLock();

  /**
   * Resource (plural), namespace and name of one object; null namespace for cluster-scoped objects.
   */
  record ObjectKey(String plural, String namespace, String name) {
    /** The key an object is stored under; empty if it lacks a plural or a name. */
    static Optional<ObjectKey> ofStored(AttributeSet attributes) {
      return Optional.ofNullable(value(attributes, KubernetesAttributesExtractor.PLURAL))
          .flatMap(
              plural ->
                  Optional.ofNullable(value(attributes, KubernetesAttributesExtractor.NAME))
                      .map(
                          name ->
                              new ObjectKey(
                                  plural,
                                  value(attributes, KubernetesAttributesExtractor.NAMESPACE),
                                  name)));
    }

    /**
     * The one bucket that can hold every match of a request, or empty when a request could match
     * objects under several keys: no namespace or name, a wildcard, or a set or negated attribute.
     */
    static Optional<ObjectKey> ofRequest(AttributeSet request) {
      for (String required :
          List.of(
              KubernetesAttributesExtractor.PLURAL,
              KubernetesAttributesExtractor.NAMESPACE,
              KubernetesAttributesExtractor.NAME)) {
        Attribute attribute = request.getAttribute(required);
        if (attribute == null
            || attribute.getType() != AttributeType.WITH
            || attribute.getValues().size() != 1
            || "*".equals(attribute.getValues().get(0).toString())) {
          return Optional.empty();
        }
      }
      return ofStored(request);
    }

    private static String value(AttributeSet attributes, String key) {
      Attribute attribute = attributes.getAttribute(key);
      return attribute == null || attribute.getValues().size() != 1
          ? null
          : attribute.getValues().get(0).toString();
    }
  }

  @Override
  public MockResponse handleCreate(RecordedRequest request) {
    if (isDryRun(request.getPath())) {
      return dryRunCreate(request);
    }
    return writing(() -> super.handleCreate(request));
  }

  /**
   * The stock store ignores {@code dryRun}: it would store the object. A real API server answers a
   * dry run as it would the creation and stores nothing; so does this (no validation, as ever
   * here).
   */
  public static MockResponse dryRunCreate(RecordedRequest request) {
    return new MockResponse()
        .setResponseCode(HttpURLConnection.HTTP_CREATED)
        .setHeader("Content-Type", "application/json")
        .setBody(new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8));
  }

  /** A request with {@code dryRun=All} in its query. */
  public static boolean isDryRun(String path) {
    int query = path.indexOf('?');
    return query >= 0 && path.substring(query).matches(".*[?&]dryRun=All(&.*)?");
  }

  @Override
  public MockResponse handleUpdate(RecordedRequest request) {
    return writing(() -> super.handleUpdate(request));
  }

  @Override
  public MockResponse handlePatch(RecordedRequest request) {
    return writing(() -> super.handlePatch(request));
  }

  @Override
  public MockResponse handleDelete(String path) {
    return writing(() -> super.handleDelete(path));
  }

  @Override
  public void reset() {
    writing(
        () -> {
          super.reset();
          byObject.clear();
          return null;
        });
  }

  @Override
  public MockResponse handleGet(String path) {
    AttributeSet request = attributeExtractor.fromPath(path);
    Optional<ObjectKey> key = isWatch(path) ? Optional.empty() : ObjectKey.ofRequest(request);
    if (key.isEmpty()) {
      return super.handleGet(path);
    }
    storeLock.readLock().lock();
    try {
      Map.Entry<AttributeSet, String> found = findInBucket(key.get(), request);
      return found == null
          ? new MockResponse().setResponseCode(HttpURLConnection.HTTP_NOT_FOUND)
          : new MockResponse().setResponseCode(HttpURLConnection.HTTP_OK).setBody(found.getValue());
    } finally {
      storeLock.readLock().unlock();
    }
  }

  @Override
  public Map.Entry<AttributeSet, String> findResource(AttributeSet attributes) {
    Optional<ObjectKey> key = ObjectKey.ofRequest(attributes);
    return key.isPresent() ? findInBucket(key.get(), attributes) : super.findResource(attributes);
  }

  @Override
  public void processEvent(
      String path,
      AttributeSet pathAttributes,
      AttributeSet oldAttributes,
      GenericKubernetesResource resource,
      String newState) {
    super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
    if (oldAttributes != null) {
      ObjectKey.ofStored(oldAttributes)
          .ifPresent(
              key ->
                  byObject.computeIfPresent(
                      key,
                      (k, bucket) -> {
                        List<AttributeSet> rest = new ArrayList<>(bucket);
                        rest.remove(oldAttributes);
                        return rest.isEmpty() ? null : List.copyOf(rest);
                      }));
    }
    if (newState != null) {
      AttributeSet stored = storedAttributes(pathAttributes, resource, newState);
      ObjectKey.ofStored(stored)
          .ifPresent(
              key ->
                  byObject.merge(
                      key,
                      List.of(stored),
                      (bucket, added) -> {
                        List<AttributeSet> all = new ArrayList<>(bucket);
                        all.addAll(added);
                        return List.copyOf(all);
                      }));
    }
  }

  /**
   * The attributes the stock {@code processEvent} stores a new state under, computed the same way.
   */
  private AttributeSet storedAttributes(
      AttributeSet pathAttributes, GenericKubernetesResource resource, String newState) {
    KubernetesAttributesExtractor extractor = (KubernetesAttributesExtractor) attributeExtractor;
    AttributeSet attributes =
        resource != null ? extractor.extract(resource) : extractor.fromResource(newState);
    return attributes.containsKey(KubernetesAttributesExtractor.PLURAL)
        ? attributes
        : AttributeSet.merge(pathAttributes, attributes);
  }

  private Map.Entry<AttributeSet, String> findInBucket(ObjectKey key, AttributeSet request) {
    for (AttributeSet candidate : byObject.getOrDefault(key, List.of())) {
      String state = map.get(candidate);
      if (state != null && candidate.matches(request)) {
        return new AbstractMap.SimpleImmutableEntry<>(candidate, state);
      }
    }
    return null;
  }

  private static boolean isWatch(String path) {
    int query = path.indexOf('?');
    return query >= 0 && path.substring(query).contains("watch=true");
  }

  private <T> T writing(Supplier<T> change) {
    storeLock.writeLock().lock();
    try {
      return change.get();
    } finally {
      storeLock.writeLock().unlock();
    }
  }
}
