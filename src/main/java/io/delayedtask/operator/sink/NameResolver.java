package io.delayedtask.operator.sink;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Turns a host name (or an IP literal) into addresses. The sender's guard checks every address it
 * returns; tests inject a fake one that maps test names to forbidden addresses without any lookup.
 */
@FunctionalInterface
public interface NameResolver {
  /**
   * The JVM's resolver ({@link InetAddress#getAllByName}): the system's DNS, /etc/hosts, IP
   * literals.
   */
  NameResolver SYSTEM = host -> List.of(InetAddress.getAllByName(host));

  List<InetAddress> resolve(String host) throws UnknownHostException;
}
