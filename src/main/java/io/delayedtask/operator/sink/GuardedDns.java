package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import okhttp3.Dns;

/**
 * OkHttp's name lookup for a destination reached by name ({@link Reach.ByName}): resolves the
 * connect host (an ExternalName) instead of the URL's host when there is one, and drops every
 * address the {@link AddressGuard} forbids, so OkHttp only ever connects to checked addresses. A
 * name that cluster DNS answers for a Service or a Pod ({@code <name>.<namespace>.svc[.<domain>]},
 * {@code <a-b-c-d>.<namespace>.pod[.<domain>]}) is refused unless an entry of
 * DELAYEDTASK_SINK_ALLOWED_URIS allowed the URL: such a name leads, through kube-proxy, to whatever
 * endpoints exist when the packet arrives, in any namespace. A Service of the task's namespace is
 * reached through its verified endpoints ({@link EndpointDns}) instead, so a destination that names
 * one without saying so is refused, never followed.
 *
 * <p>A record, so two requests to the same destination make equal {@code Dns} objects: OkHttp keys
 * its connection pool by address including the {@code Dns}, and equal ones share connections.
 */
record GuardedDns(NameResolver resolver, Reach.ByName reach, String clusterDomain) implements Dns {

  @Override
  public List<InetAddress> lookup(String urlHost) throws UnknownHostException {
    String host = reach.connectHost().orElse(urlHost);
    if (!reach.allowlisted() && namesInCluster(host, clusterDomain)) {
      throw new ForbiddenAddressException(
          host
              + " is a name of the cluster's Services or Pods, which leads to "
              + "whatever endpoints exist then, in any namespace; a sink.ref Service is reached at its endpoints that "
              + "are Pods of the task's namespace, anything else only through an entry of "
              + SinkConfig.ALLOWED_URIS);
    }
    List<InetAddress> resolved = resolver.resolve(host);
    List<InetAddress> allowed = new ArrayList<>();
    String firstRule = null;
    for (InetAddress address : resolved) {
      Optional<String> rule = AddressGuard.forbidden(address, reach.loopbackAllowed());
      if (rule.isEmpty()) {
        allowed.add(address);
      } else if (firstRule == null) {
        firstRule = rule.get();
      }
    }
    if (allowed.isEmpty()) {
      if (firstRule == null) {
        throw new UnknownHostException(host + " resolved to no address");
      }
      throw new ForbiddenAddressException(firstRule);
    }
    return allowed;
  }

  /**
   * Whether cluster DNS answers {@code host} for a Service or a Pod: it ends in .svc or .pod, with
   * or without the domain.
   */
  static boolean namesInCluster(String host, String clusterDomain) {
    String name = host.toLowerCase(Locale.ROOT);
    while (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    String domain = clusterDomain.toLowerCase(Locale.ROOT);
    for (String kind : List.of(".svc", ".pod")) {
      if (name.endsWith(kind) || name.endsWith(kind + "." + domain)) {
        return true;
      }
    }
    return false;
  }
}
