package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortsTest {
  @Test
  void portsComeFromBelowTheEphemeralRangeEachOnceAndFree() throws IOException {
    int ephemeralLow = Ports.ephemeralLow();
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      int port = Ports.freePort();
      assertThat(port).isBetween(Ports.FIRST, ephemeralLow - 1);
      assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      }
    }
  }

  @Test
  void aPortSomethingListensOnIsPassedOver() throws IOException {
    int next = Ports.freePort() + 1;
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), next));
      assertThat(Ports.freePort()).isNotEqualTo(next);
    }
  }
}
