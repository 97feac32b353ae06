package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Loopback ports for the processes and servers a test starts, taken from below the kernel's
 * ephemeral range.
 *
 * <p>Why not the kernel's pick (bind to port 0, close, hand the number on): the kernel gives the
 * same ephemeral ports to outgoing connections, and an operator JVM binds its port seconds after
 * the pick, while the API server, Redis and the other operators open connections. An operator once
 * died with "Address already in use" in the middle of a failover test that way. The kernel never
 * hands out a port below its ephemeral range on its own, so a port picked there stays free until
 * its process binds it, unless another test JVM in the same network picks the same one at the same
 * moment: each JVM starts at a random point of the range and walks on from there.
 */
public final class Ports {
  /** The lowest port handed out. */
  static final int FIRST = 20_000;

  /** The kernel's ephemeral range on Linux, unless the machine's sysctl says otherwise. */
  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  private static final int DEFAULT_EPHEMERAL_LOW = 32_768;

  private static final int END = ephemeralLow();

  /** Where the next pick starts (a random point at first), advancing past every port handed out. */
  private static final AtomicInteger NEXT =
      new AtomicInteger(END > FIRST ? ThreadLocalRandom.current().nextInt(FIRST, END) : 0);

  private Ports() {}

  /** A loopback port nothing listens on now, below the ephemeral range (see the class comment). */
  public static int freePort() {
    if (END <= FIRST) {
      return kernelsPick(); // an ephemeral range reaching down to FIRST leaves nothing below it
    }
    for (int tries = 0; tries < END - FIRST; tries++) {
      int port = NEXT.getAndUpdate(p -> p + 1 >= END ? FIRST : p + 1);
      if (bindable(port)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free loopback port between "
            + FIRST
            + " and "
            + END
            + " (the ephemeral range's start)");
  }

  /** The first port of the kernel's ephemeral range. */
  static int ephemeralLow() {
    try {
      // Read line by line: Files.readString gives only the first byte of a /proc file (size 0).
      return Integer.parseInt(Files.readAllLines(EPHEMERAL_RANGE).get(0).trim().split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return DEFAULT_EPHEMERAL_LOW;
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int kernelsPick() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
