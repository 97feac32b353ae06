package io.delayedtask.operator.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A loopback TCP proxy in front of a server, so a test can cut every connection mid-flight ({@link
 * #dropConnections()}) or refuse new ones for a while ({@link #setAccepting(boolean)}), as a
 * network partition or a load balancer restart would.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          r -> {
            Thread thread = new Thread(r, "tcp-proxy");
            thread.setDaemon(true);
            return thread;
          });
  private final AtomicBoolean accepting = new AtomicBoolean(true);
  private volatile boolean closed;

  public TcpProxy(String targetHost, int targetPort) {
    this.target = new InetSocketAddress(targetHost, targetPort);
    try {
      this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    threads.submit(this::acceptLoop);
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** While false, new connections are closed as soon as they are accepted. */
  public void setAccepting(boolean value) {
    accepting.set(value);
  }

  /** Closes every connection through the proxy (both sides), as a cut cable would. */
  public void dropConnections() {
    for (Socket socket : open) {
      closeQuietly(socket);
    }
    open.clear();
  }

  public int openConnections() {
    return open.size();
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(listener);
    dropConnections();
    threads.shutdownNow();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return;
      }
      if (!accepting.get()) {
        closeQuietly(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        upstream.connect(target, 2_000);
        open.add(client);
        open.add(upstream);
        threads.submit(() -> pump(client, upstream));
        threads.submit(() -> pump(upstream, client));
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      int read;
      while ((read = in.read(buffer)) >= 0) {
        out.write(buffer, 0, read);
        out.flush();
      }
    } catch (IOException ignored) {
      // one side went away: close both below
    } finally {
      closeQuietly(from);
      closeQuietly(to);
      open.remove(from);
      open.remove(to);
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // already closed
    }
  }
}
