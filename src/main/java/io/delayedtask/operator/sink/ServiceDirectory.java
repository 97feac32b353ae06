package io.delayedtask.operator.sink;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.List;
import java.util.Optional;

/**
 * What {@link Destinations} knows of a namespace's Services and their EndpointSlices, without a
 * request per delivery: the operator's informers ({@link InformedServices}), a fake in unit tests.
 */
public interface ServiceDirectory {
  /**
   * Whether the Services and EndpointSlices of {@code namespace} have been listed (an answer is
   * then current).
   */
  boolean knows(String namespace);

  Optional<Service> service(String namespace, String name);

  /**
   * The EndpointSlices labelled {@code kubernetes.io/service-name: <service>} in {@code namespace}.
   */
  List<EndpointSlice> endpointSlices(String namespace, String service);

  /**
   * The Pod {@code namespace/name} as the operator knows it (name, namespace, {@code
   * spec.hostNetwork}, {@code status.phase} and {@code status.podIPs}: what {@link EndpointCheck}
   * verifies an endpoint by); empty when it is not known, which verifies nothing.
   */
  default Optional<Pod> pod(String namespace, String name) {
    return Optional.empty();
  }
}
