package io.delayedtask.operator.sink;

import java.util.Objects;
import java.util.Optional;

/**
 * What one delivery request may connect to, judged by the sender at the moment it connects (on
 * every connection: the first, a retry on another address, a pooled one reused), never before.
 * Every {@link DeliveryRequest} carries one, and the sender connects through nothing else ({@link
 * OkHttpSender}: the {@code Dns} hook answers from it, {@code ConnectCheck} judges the address
 * about to be connected and a network interceptor the connection a request is about to be written
 * on). The {@link AddressGuard} holds for every kind.
 */
public sealed interface Reach {

  /**
   * A name resolved when connecting: an absolute {@code uri}, an ExternalName, an Addressable's
   * URL.
   *
   * @param connectHost what to resolve instead of the URL's host (an ExternalName's name); empty:
   *     the URL's host
   * @param loopbackAllowed the entry of DELAYEDTASK_SINK_ALLOWED_URIS that allowed this URL names a
   *     loopback host
   * @param allowlisted an entry of DELAYEDTASK_SINK_ALLOWED_URIS allowed this URL: only then may
   *     the name be one of the cluster's Services ({@code <name>.<namespace>.svc...}), which
   *     cluster DNS and kube-proxy lead to whatever endpoints exist then, so a destination that
   *     names a Service without checking its endpoints is refused rather than followed
   */
  record ByName(Optional<String> connectHost, boolean loopbackAllowed, boolean allowlisted)
      implements Reach {
    public ByName {
      Objects.requireNonNull(connectHost, "connectHost");
    }
  }

  /**
   * A Service of the task's namespace: never dialled by its name or clusterIP (which lead to
   * whatever endpoints exist when the packet arrives), but at the addresses its EndpointSlices list
   * that {@link EndpointCheck} verifies as Pods of {@code namespace} at the moment of connecting,
   * on the port its slices give the Service's port; the Host header stays the Service's name.
   *
   * @param portName the Service port's name ("" for a single unnamed port)
   */
  record ServiceEndpoints(
      ServiceDirectory directory, String namespace, String service, String portName)
      implements Reach {
    public ServiceEndpoints {
      Objects.requireNonNull(directory, "directory");
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(service, "service");
      Objects.requireNonNull(portName, "portName");
    }

    /** Its endpoints as they are now. */
    EndpointCheck.Judgement judge() {
      return EndpointCheck.judge(directory, namespace, service, portName);
    }
  }
}
