package io.delayedtask.operator.testing;

import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.List;

/**
 * Whether this JVM runs in a network namespace that has only loopback
 * (tools/loopback-only/bin/java): there no packet can leave the machine, whatever the code under
 * test connects to.
 */
public final class LoopbackOnlyNetwork {
  private LoopbackOnlyNetwork() {}

  /**
   * The names of the interfaces that are up and not loopback; empty in a loopback-only namespace.
   */
  static List<String> otherInterfacesUp() {
    try {
      return NetworkInterface.networkInterfaces()
          .filter(LoopbackOnlyNetwork::upAndNotLoopback)
          .map(NetworkInterface::getName)
          .toList();
    } catch (SocketException e) {
      throw new IllegalStateException("cannot list this machine's network interfaces", e);
    }
  }

  /**
   * Says loudly when this JVM's network is not loopback only. The test runs all the same, never
   * skipped: its sockets (LoopbackOnlySockets) still refuse any other address before a packet
   * leaves; the namespace is the second wall, for what those sockets do not cover.
   */
  public static void warnUnlessIsolated() {
    List<String> others = otherInterfacesUp();
    if (!others.isEmpty()) {
      System.err.println(
          "*** NOT IN A LOOPBACK-ONLY NETWORK: this JVM sees interfaces "
              + others
              + " up; mvn verify "
              + "runs this test through tools/loopback-only/bin/java, which needs unshare --net (root or CAP_SYS_ADMIN) "
              + "and ip(8). Running with loopback-only sockets alone ***");
    }
  }

  private static boolean upAndNotLoopback(NetworkInterface nic) {
    try {
      return nic.isUp() && !nic.isLoopback();
    } catch (SocketException e) {
      return false;
    }
  }
}
