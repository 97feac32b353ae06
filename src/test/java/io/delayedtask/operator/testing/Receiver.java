package io.delayedtask.operator.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.message.Encoding;
import io.cloudevents.core.message.MessageReader;
import io.cloudevents.http.HttpMessageFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * An HTTP server on 127.0.0.1 that records every request a sink receives (on its own clock), reads
 * each back through the CloudEvents SDK's HTTP reader (a request that is not a valid binary-mode
 * CloudEvent is answered 400 and fails {@link Request#event()}), and answers the others as scripted
 * per path: a queue of answers, the last one repeated. Loopback only: no test reaches anything
 * else.
 */
public final class Receiver implements AutoCloseable {
  /**
   * One request as it arrived: headers lower-cased, the body as text, and the CloudEvent the
   * CloudEvents SDK's HTTP reader made of it (absent, with the reason, when it is not a valid
   * binary-mode CloudEvent: such a request was answered 400, as a CloudEvents receiver would).
   */
  public record Request(
      Instant at,
      String method,
      String path,
      Map<String, String> headers,
      String body,
      Optional<CloudEvent> cloudEvent,
      String notACloudEvent) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    /**
     * The request read back as a CloudEvent by the SDK; fails the test when it is not a binary-mode
     * one.
     */
    public CloudEvent event() {
      return cloudEvent.orElseThrow(
          () ->
              new AssertionError(
                  "not a binary-mode CloudEvent: " + notACloudEvent + "; headers " + headers));
    }

    /** The CloudEvent's extension (or attribute) as the SDK read it, as text; null when absent. */
    public String attribute(String name) {
      CloudEvent event = event();
      Object value =
          event.getAttributeNames().contains(name)
              ? event.getAttribute(name)
              : event.getExtension(name);
      return value == null ? null : value.toString();
    }
  }

  /** What to answer: a status, headers, a body (none when empty), and how long to wait first. */
  public record Answer(int status, Map<String, String> headers, Duration delay, String body) {
    public static Answer status(int status) {
      return new Answer(status, Map.of(), Duration.ZERO, "");
    }

    public Answer withHeader(String name, String value) {
      Map<String, String> more = new TreeMap<>(headers);
      more.put(name, value);
      return new Answer(status, more, delay, body);
    }

    public Answer after(Duration wait) {
      return new Answer(status, headers, wait, body);
    }

    public Answer withBody(String text) {
      return new Answer(status, headers, delay, text);
    }
  }

  private final HttpServer server;
  private final String scheme;
  private final String caPem;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, Deque<Answer>> script = new ConcurrentHashMap<>();
  private volatile BiConsumer<Request, Answer> listener = (request, answer) -> {};

  private Receiver(HttpServer server, String scheme, String caPem) {
    this.server = server;
    this.scheme = scheme;
    this.caPem = caPem;
  }

  public static Receiver start() {
    try {
      return started(
          HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64),
          "http",
          null);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start a receiver on loopback", e);
    }
  }

  /**
   * The same over https, with a self-signed certificate for IP 127.0.0.1 made by the JDK's keytool
   * in {@code dir} (trusted by no one unless given {@link #caPem()}, as a task's {@code
   * sink.caCerts}).
   */
  /** {@link #startHttps(Path)} in a temporary directory of its own. */
  public static Receiver startHttps() {
    try {
      return startHttps(Files.createTempDirectory("receiver-tls"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static Receiver startHttps(Path dir) {
    try {
      char[] password = "changeit".toCharArray();
      Path keystore = dir.resolve("receiver.p12");
      keytool(
          "-genkeypair",
          "-alias",
          "receiver",
          "-keyalg",
          "EC",
          "-groupname",
          "secp256r1",
          "-validity",
          "2",
          "-dname",
          "CN=127.0.0.1",
          "-ext",
          "SAN=ip:127.0.0.1",
          "-keystore",
          keystore.toString(),
          "-storetype",
          "PKCS12",
          "-storepass",
          new String(password));
      Path certificate = dir.resolve("receiver.pem");
      keytool(
          "-exportcert",
          "-rfc",
          "-alias",
          "receiver",
          "-keystore",
          keystore.toString(),
          "-storepass",
          new String(password),
          "-file",
          certificate.toString());
      KeyStore keys = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keystore)) {
        keys.load(in, password);
      }
      KeyManagerFactory keyManagers =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(keys, password);
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(keyManagers.getKeyManagers(), null, null);
      HttpsServer server =
          HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
      server.setHttpsConfigurator(new HttpsConfigurator(tls));
      return started(server, "https", Files.readString(certificate));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot start an https receiver on loopback", e);
    }
  }

  private static void keytool(String... args) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        process.destroyForcibly();
        throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted waiting for keytool", e);
    }
  }

  private static Receiver started(HttpServer server, String scheme, String caPem) {
    Receiver receiver = new Receiver(server, scheme, caPem);
    server.createContext("/", receiver::handle);
    server.setExecutor(
        Executors.newCachedThreadPool(
            runnable -> {
              Thread thread = new Thread(runnable, "receiver");
              thread.setDaemon(true);
              return thread;
            }));
    server.start();
    return receiver;
  }

  /** {@code http://127.0.0.1:<port>}, or https for {@link #startHttps}. */
  public String base() {
    return scheme + "://127.0.0.1:" + port();
  }

  /** The PEM certificate an https receiver presents (its own CA); null over http. */
  public String caPem() {
    return caPem;
  }

  /** {@link #caPem()}, named for the field it goes into. */
  public String caCertsPem() {
    return caPem;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** Answers for requests to {@code path}, in order; the last one repeats. Default: 200. */
  public Receiver answer(String path, Answer... answers) {
    script.put(path, new ConcurrentLinkedDeque<>(List.of(answers)));
    return this;
  }

  /**
   * {@code listener} is told of every request as it arrives, with the answer it gets (the sandbox
   * prints them).
   */
  public Receiver onRequest(BiConsumer<Request, Answer> listener) {
    this.listener = listener;
    return this;
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  public List<Request> requestsTo(String path) {
    List<Request> to = new ArrayList<>();
    for (Request request : requests) {
      if (request.path().equals(path)) {
        to.add(request);
      }
    }
    return to;
  }

  private void handle(HttpExchange exchange) throws IOException {
    Instant at = Instant.now();
    byte[] bytes;
    try (InputStream in = exchange.getRequestBody()) {
      bytes = in.readAllBytes();
    }
    String body = new String(bytes, StandardCharsets.UTF_8);
    Map<String, String> headers = new TreeMap<>();
    exchange
        .getRequestHeaders()
        .forEach(
            (name, values) -> headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
    String path =
        exchange.getRequestURI().getRawPath()
            + (exchange.getRequestURI().getRawQuery() == null
                ? ""
                : "?" + exchange.getRequestURI().getRawQuery());
    Optional<CloudEvent> event = Optional.empty();
    String problem = null;
    try {
      MessageReader reader = HttpMessageFactory.createReader(headers, bytes);
      if (reader.getEncoding() != Encoding.BINARY) {
        problem = "the encoding is " + reader.getEncoding() + ", not BINARY";
      } else {
        event = Optional.of(reader.toEvent());
      }
    } catch (RuntimeException e) {
      problem = String.valueOf(e.getMessage());
    }
    Request request =
        new Request(at, exchange.getRequestMethod(), path, headers, body, event, problem);
    requests.add(request);
    Answer answer =
        event.isPresent() ? next(exchange.getRequestURI().getRawPath()) : Answer.status(400);
    listener.accept(request, answer);
    try {
      if (!answer.delay().isZero()) {
        Thread.sleep(answer.delay().toMillis()); // the scripted slow receiver, on its own thread
      }
      answer.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
      byte[] answerBody = answer.body().getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(
          answer.status(), answerBody.length == 0 ? -1 : answerBody.length);
      if (answerBody.length > 0) {
        exchange.getResponseBody().write(answerBody);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // the client gave up (its timeout): nothing to answer
    } finally {
      exchange.close();
    }
  }

  private Answer next(String path) {
    Deque<Answer> answers = script.get(path);
    if (answers == null || answers.isEmpty()) {
      return Answer.status(200);
    }
    return answers.size() > 1 ? answers.pollFirst() : answers.peekFirst();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
