package io.delayedtask.operator.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.SocketFactory;

/**
 * Sockets that connect to loopback only: any other address is refused before a packet leaves and
 * recorded, so a test whose guard is broken fails instead of reaching 169.254.169.254. An address a
 * test stands in for ({@link #standIn}: a Pod's, which the API server refuses to list as loopback)
 * connects, whatever the port, to the loopback receiver standing for it.
 */
public final class LoopbackOnlySockets extends SocketFactory {
  private final List<SocketAddress> refused = new CopyOnWriteArrayList<>();
  private final Map<InetAddress, Integer> standIns = new ConcurrentHashMap<>();

  /** Non-loopback addresses something tried to connect to. */
  public List<SocketAddress> refused() {
    return refused;
  }

  /**
   * Connections to {@code address} (any port) go to {@code loopbackPort} on 127.0.0.1 until the
   * returned handle is closed.
   */
  public AutoCloseable standIn(InetAddress address, int loopbackPort) {
    standIns.put(address, loopbackPort);
    return () -> standIns.remove(address, loopbackPort);
  }

  @Override
  public Socket createSocket() {
    return new Socket() {
      @Override
      public void connect(SocketAddress endpoint, int timeout) throws IOException {
        InetAddress address = endpoint instanceof InetSocketAddress inet ? inet.getAddress() : null;
        Integer standIn = address == null ? null : standIns.get(address);
        if (standIn != null) {
          super.connect(
              new InetSocketAddress(InetAddress.getByName("127.0.0.1"), standIn), timeout);
          return;
        }
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
  public Socket createSocket(
      InetAddress address, int port, InetAddress localAddress, int localPort) {
    throw new UnsupportedOperationException("connect through createSocket() only");
  }
}
