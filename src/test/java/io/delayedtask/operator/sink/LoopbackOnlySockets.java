package io.delayedtask.operator.sink;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.SocketFactory;

/**
 * Sockets that connect to loopback only: any other address is refused before a packet leaves and
 * recorded, so a test whose guard is broken fails instead of reaching 169.254.169.254.
 */
final class LoopbackOnlySockets extends SocketFactory {
  private final List<SocketAddress> refused = new CopyOnWriteArrayList<>();

  /** Non-loopback addresses something tried to connect to. */
  List<SocketAddress> refused() {
    return refused;
  }

  @Override
  public Socket createSocket() {
    return new Socket() {
      @Override
      public void connect(SocketAddress endpoint, int timeout) throws IOException {
        InetAddress address = endpoint instanceof InetSocketAddress inet ? inet.getAddress() : null;
        if (address == null || !address.isLoopbackAddress()) {
          refused.add(endpoint);
          throw new IOException("test sockets connect to loopback only, not " + endpoint);
        }
        super.connect(endpoint, timeout);
      }
    };
  }

  @Override
  public Socket createSocket(String host, int port) {
    throw new UnsupportedOperationException("connect through createSocket() only");
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
    throw new UnsupportedOperationException("connect through createSocket() only");
  }

  @Override
  public Socket createSocket(InetAddress host, int port) {
    throw new UnsupportedOperationException("connect through createSocket() only");
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) {
    throw new UnsupportedOperationException("connect through createSocket() only");
  }
}
