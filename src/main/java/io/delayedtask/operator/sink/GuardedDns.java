package io.delayedtask.operator.sink;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import okhttp3.Dns;

/**
 * OkHttp's name lookup for one destination: resolves the connect host (a Service's clusterIP or
 * ExternalName) instead of the URL's host when there is one, and drops every address the
 * {@link AddressGuard} forbids, so OkHttp only ever connects to checked addresses.
 *
 * <p>A record, so two requests to the same destination make equal {@code Dns} objects: OkHttp keys
 * its connection pool by address including the {@code Dns}, and equal ones share connections.
 */
record GuardedDns(NameResolver resolver, Optional<String> connectHost, boolean loopbackAllowed) implements Dns {

  @Override
  public List<InetAddress> lookup(String urlHost) throws UnknownHostException {
    List<InetAddress> resolved = resolver.resolve(connectHost.orElse(urlHost));
    List<InetAddress> allowed = new ArrayList<>();
    String firstRule = null;
    for (InetAddress address : resolved) {
      Optional<String> rule = AddressGuard.forbidden(address, loopbackAllowed);
      if (rule.isEmpty()) {
        allowed.add(address);
      } else if (firstRule == null) {
        firstRule = rule.get();
      }
    }
    if (allowed.isEmpty()) {
      if (firstRule == null) {
        throw new UnknownHostException(connectHost.orElse(urlHost) + " resolved to no address");
      }
      throw new ForbiddenAddressException(firstRule);
    }
    return allowed;
  }
}
