package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Whether the addresses a Service's EndpointSlices list are Pods of the task's namespace, judged by
 * what a writer of EndpointSlices cannot forge. A slice's labels (who manages it) and its {@code
 * targetRef}s are whatever its writer wrote; a Pod's {@code status.podIPs} is written by the
 * kubelet from the network plugin's answer. So an address is verified only when its endpoint's
 * {@code targetRef} names a Pod of the namespace and the operator knows that Pod, not finished, not
 * on its node's network, with that address among its {@code podIPs}: the test Kubernetes' own
 * EndpointSlice controller applies to the Pods it lists.
 *
 * <p>The same judgement runs when a destination resolves ({@link Destinations}) and again when the
 * sender connects ({@link Reach.ServiceEndpoints}), on the informers' state of that moment.
 */
final class EndpointCheck {
  static final String REF_RULE = "a sink.ref reaches only the task's namespace";
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

  private EndpointCheck() {}

  /**
   * A Service's endpoints, judged now.
   *
   * @param dialable the verified, ready addresses with the port its slice gives the Service's port
   * @param unverified the first listed address that is not verified, as the sentence a task's
   *     status shows; present: nothing of this Service is dialled
   */
  record Judgement(List<InetSocketAddress> dialable, Optional<String> unverified) {}

  /**
   * @param portName the name of the Service's port delivered to ("" when it has one unnamed port):
   *     an EndpointSlice port of that name gives each endpoint's port
   */
  static Judgement judge(
      ServiceDirectory directory, String namespace, String service, String portName) {
    List<InetSocketAddress> dialable = new ArrayList<>();
    for (EndpointSlice slice : directory.endpointSlices(namespace, service)) {
      Optional<Integer> port =
          Optional.ofNullable(slice.getPorts()).orElse(List.of()).stream()
              .filter(p -> Objects.equals(Optional.ofNullable(p.getName()).orElse(""), portName))
              .map(EndpointPort::getPort)
              .filter(Objects::nonNull)
              .findFirst();
      for (Endpoint endpoint : Optional.ofNullable(slice.getEndpoints()).orElse(List.of())) {
        List<String> addresses = Optional.ofNullable(endpoint.getAddresses()).orElse(List.of());
        if (addresses.isEmpty()) {
          return refused(namespace, service, "an endpoint", "it has no address");
        }
        for (String address : addresses) {
          Optional<String> why = unverified(directory, namespace, endpoint, address);
          if (why.isPresent()) {
            return refused(namespace, service, address, why.get());
          }
          boolean ready =
              endpoint.getConditions() == null
                  || !Boolean.FALSE.equals(endpoint.getConditions().getReady());
          if (ready && port.isPresent()) {
            dialable.add(new InetSocketAddress(literal(address).orElseThrow(), port.get()));
          }
        }
      }
    }
    return new Judgement(List.copyOf(dialable), Optional.empty());
  }

  private static Judgement refused(String namespace, String service, String address, String why) {
    return new Judgement(
        List.of(),
        Optional.of(
            REF_RULE
                + ": Service "
                + service
                + " lists "
                + address
                + " in its EndpointSlices, which is not a Pod of namespace "
                + namespace
                + " ("
                + why
                + "); point the "
                + "Service at this namespace's Pods, or use an absolute sink.uri that the operator's "
                + SinkConfig.ALLOWED_URIS
                + " allows"));
  }

  /**
   * Why {@code address} of {@code endpoint} is not a verified Pod of {@code namespace}; empty when
   * it is.
   */
  static Optional<String> unverified(
      ServiceDirectory directory, String namespace, Endpoint endpoint, String address) {
    ObjectReference target = endpoint.getTargetRef();
    boolean podHere =
        target != null
            && "Pod".equals(target.getKind())
            && namespace.equals(target.getNamespace())
            && (target.getApiVersion() == null
                || target.getApiVersion().isEmpty()
                || "v1".equals(target.getApiVersion()))
            && target.getName() != null;
    if (!podHere) {
      return Optional.of(
          target == null
              ? "its endpoint names no Pod"
              : "its endpoint names "
                  + target.getKind()
                  + " "
                  + target.getNamespace()
                  + "/"
                  + target.getName());
    }
    Optional<InetAddress> ip = literal(address);
    if (ip.isEmpty()) {
      return Optional.of("it is not an IP address");
    }
    Optional<Pod> pod = directory.pod(namespace, target.getName());
    if (pod.isEmpty()) {
      return Optional.of("the operator knows no Pod " + target.getName() + " there");
    }
    if (pod.get().getSpec() != null && Boolean.TRUE.equals(pod.get().getSpec().getHostNetwork())) {
      return Optional.of(
          "Pod " + target.getName() + " is on its node's network: the address is the node's");
    }
    String phase = pod.get().getStatus() == null ? null : pod.get().getStatus().getPhase();
    if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
      return Optional.of(
          "Pod " + target.getName() + " has finished: its address may be another Pod's now");
    }
    if (!podIps(pod.get()).contains(ip.get())) {
      return Optional.of("Pod " + target.getName() + " does not have that address");
    }
    return Optional.empty();
  }

  private static List<InetAddress> podIps(Pod pod) {
    List<InetAddress> ips = new ArrayList<>();
    if (pod.getStatus() == null) {
      return ips;
    }
    for (PodIP podIp : Optional.ofNullable(pod.getStatus().getPodIPs()).orElse(List.of())) {
      literal(podIp.getIp()).ifPresent(ips::add);
    }
    literal(pod.getStatus().getPodIP()).ifPresent(ips::add);
    return ips;
  }

  /**
   * An IP literal as an address, parsed without any lookup; empty for anything else (a name,
   * garbage).
   */
  static Optional<InetAddress> literal(String text) {
    try {
      if (text != null && IPV4.matcher(text).matches()) {
        String[] parts = text.split("\\.");
        byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++) {
          int octet = Integer.parseInt(parts[i]);
          if (octet > 255) {
            return Optional.empty();
          }
          bytes[i] = (byte) octet;
        }
        return Optional.of(InetAddress.getByAddress(bytes));
      }
      if (text != null && IPV6.matcher(text).matches()) {
        return Optional.of(
            InetAddress.getByName(text)); // holds ':': parsed as IPv6, never looked up
      }
    } catch (UnknownHostException notAnAddress) {
      return Optional.empty();
    }
    return Optional.empty();
  }
}
