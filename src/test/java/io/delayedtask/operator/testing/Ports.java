package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Loopback ports for the processes and servers a test starts. */
public final class Ports {
  private Ports() {}

  /**
   * A loopback port nothing listens on right now (the kernel's pick; a small race with other
   * processes remains).
   */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
