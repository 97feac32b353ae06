package io.delayedtask.operator.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * /metrics (Prometheus text), /healthz (the process runs) and /readyz (it can do its work).
 *
 * <p>Served by Netty's HTTP codec on two event-loop threads: a connection waiting for a request, or
 * sending one slowly, holds no thread (the JDK HttpServer this replaces gave each connection that
 * had sent a byte one of its two threads until the request was complete, so two idle connections
 * starved the kubelet's probes), and a connection that sends nothing for {@link #READ_TIMEOUT} is
 * closed. Requests are small: an initial line above 4 KiB, headers above 8 KiB or a body above 8
 * KiB are refused.
 */
public final class HttpEndpoints implements AutoCloseable {
  /** A connection that sends nothing for this long (no request, or a request stalled) is closed. */
  public static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

  private static final int MAX_INITIAL_LINE = 4096;
  private static final int MAX_HEADERS = 8192;
  private static final int MAX_BODY = 8192;

  private final EventLoopGroup acceptor;
  private final EventLoopGroup workers;
  private final Channel channel;

  /** Why the operator is not ready, or null when it is. */
  @FunctionalInterface
  public interface Readiness {
    String notReadyReason();
  }

  private HttpEndpoints(EventLoopGroup acceptor, EventLoopGroup workers, Channel channel) {
    this.acceptor = acceptor;
    this.workers = workers;
    this.channel = channel;
  }

  public static HttpEndpoints start(
      int port, PrometheusMeterRegistry registry, Readiness readiness) {
    return start(port, registry, readiness, READ_TIMEOUT);
  }

  static HttpEndpoints start(
      int port, PrometheusMeterRegistry registry, Readiness readiness, Duration readTimeout) {
    EventLoopGroup acceptor =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("http-accept", true), NioIoHandler.newFactory());
    EventLoopGroup workers =
        new MultiThreadIoEventLoopGroup(
            2, new DefaultThreadFactory("http", true), NioIoHandler.newFactory());
    try {
      Channel channel =
          new ServerBootstrap()
              .group(acceptor, workers)
              .channel(NioServerSocketChannel.class)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline()
                          .addLast(
                              new ReadTimeoutHandler(readTimeout.toMillis(), TimeUnit.MILLISECONDS))
                          .addLast(new HttpServerCodec(MAX_INITIAL_LINE, MAX_HEADERS, MAX_BODY))
                          .addLast(new HttpObjectAggregator(MAX_BODY))
                          .addLast(new Endpoints(registry, readiness));
                    }
                  })
              .bind(new InetSocketAddress(port))
              .syncUninterruptibly()
              .channel();
      return new HttpEndpoints(acceptor, workers, channel);
    } catch (RuntimeException e) {
      acceptor.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw new IllegalStateException(
          "cannot listen on port " + port + " (DELAYEDTASK_HTTP_PORT): " + e, e);
    }
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The three paths; anything else 404, methods other than GET and HEAD 405. */
  private static final class Endpoints extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final PrometheusMeterRegistry registry;
    private final Readiness readiness;

    Endpoints(PrometheusMeterRegistry registry, Readiness readiness) {
      this.registry = registry;
      this.readiness = readiness;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      boolean keepAlive = HttpUtil.isKeepAlive(request);
      if (!request.decoderResult().isSuccess()) {
        respond(ctx, request, HttpResponseStatus.BAD_REQUEST, "text/plain", "bad request\n", false);
        return;
      }
      HttpMethod method = request.method();
      if (!HttpMethod.GET.equals(method) && !HttpMethod.HEAD.equals(method)) {
        respond(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", "", keepAlive);
        return;
      }
      switch (new QueryStringDecoder(request.uri()).path()) {
        case "/metrics" ->
            respond(
                ctx,
                request,
                HttpResponseStatus.OK,
                "text/plain; version=0.0.4; charset=utf-8",
                registry.scrape(),
                keepAlive);
        case "/healthz" ->
            respond(ctx, request, HttpResponseStatus.OK, "text/plain", "ok\n", keepAlive);
        case "/readyz" -> {
          String reason = readiness.notReadyReason();
          respond(
              ctx,
              request,
              reason == null ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
              "text/plain",
              reason == null ? "ready\n" : reason + "\n",
              keepAlive);
        }
        default -> respond(ctx, request, HttpResponseStatus.NOT_FOUND, "text/plain", "", keepAlive);
      }
    }

    private static void respond(
        ChannelHandlerContext ctx,
        FullHttpRequest request,
        HttpResponseStatus status,
        String contentType,
        String body,
        boolean keepAlive) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      boolean head = HttpMethod.HEAD.equals(request.method());
      FullHttpResponse response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              status,
              head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes));
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
      response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
      HttpUtil.setKeepAlive(response, keepAlive);
      var written = ctx.writeAndFlush(response);
      if (!keepAlive) {
        written.addListener(ChannelFutureListener.CLOSE);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // A read timeout, a reset, a request too large: this connection ends, the server goes on.
      ctx.close();
    }
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
