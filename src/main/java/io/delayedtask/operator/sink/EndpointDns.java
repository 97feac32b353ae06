package io.delayedtask.operator.sink;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import okhttp3.Dns;

/**
 * OkHttp's name lookup for a Service of the task's namespace ({@link Reach.ServiceEndpoints}): the
 * Service's name is never resolved; the answer is, at that moment, the addresses its EndpointSlices
 * list that {@link EndpointCheck} verifies as Pods of the namespace, ready, on {@code port} (the
 * port the URL OkHttp connects with carries), in random order (the spread kube-proxy would give).
 * Any address of the Service that is not verified refuses them all, as when it resolved.
 *
 * <p>A record: OkHttp's connection pool, keyed by address including the {@code Dns}, shares a
 * connection only among requests to the same Service of the same namespace on the same port.
 */
record EndpointDns(Reach.ServiceEndpoints reach, int port) implements Dns {

  @Override
  public List<InetAddress> lookup(String serviceName) throws UnknownHostException {
    EndpointCheck.Judgement now = reach.judge();
    if (now.unverified().isPresent()) {
      throw new ForbiddenAddressException(now.unverified().get());
    }
    List<InetAddress> addresses = new ArrayList<>();
    for (InetSocketAddress endpoint : now.dialable()) {
      if (endpoint.getPort() == port
          && AddressGuard.forbidden(endpoint.getAddress(), false).isEmpty()) {
        addresses.add(endpoint.getAddress());
      }
    }
    if (addresses.isEmpty()) {
      throw new UnknownHostException(
          "Service " + reach.service() + " has no ready endpoint on port " + port);
    }
    Collections.shuffle(addresses);
    return addresses;
  }

  /**
   * Whether {@code address} may be connected to now: refused (forbidden, the task fails) when the
   * guard forbids it or the Service lists an address that is not verified; missed (not dialled, the
   * attempt goes unanswered and is retried) when it is simply no longer a ready endpoint (its Pod
   * went away since the lookup); empty when it is a verified endpoint of the Service now.
   */
  Optional<ConnectCheck.Refusal> refused(InetSocketAddress address) {
    Optional<String> guard = AddressGuard.forbidden(address.getAddress(), false);
    if (guard.isPresent()) {
      return Optional.of(ConnectCheck.Refusal.forbidden(guard.get()));
    }
    EndpointCheck.Judgement now = reach.judge();
    if (now.unverified().isPresent()) {
      return Optional.of(ConnectCheck.Refusal.forbidden(now.unverified().get()));
    }
    if (!now.dialable().contains(address)) {
      return Optional.of(
          ConnectCheck.Refusal.missed(
              AddressGuard.text(address.getAddress())
                  + " is no longer a "
                  + "ready endpoint of Service "
                  + reach.service()));
    }
    return Optional.empty();
  }
}
