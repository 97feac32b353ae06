package io.delayedtask.operator.schedule;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.RedisUris;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The Lettuce client and connections behind a {@link RedisSchedule}: standalone ({@code redis://}),
 * TLS ({@code rediss://}), Sentinel ({@code redis-sentinel://}) or Redis Cluster, behind one async
 * command type ({@link RedisClusterAsyncCommands} is a supertype of the standalone API).
 *
 * <p>Connections open lazily, on first use: a Redis that is down when the operator starts is not an
 * error, each use then throws {@link ScheduleUnavailableException} until Redis answers. Once
 * connected, Lettuce reconnects by itself; while disconnected, commands are rejected at once rather
 * than queued, so callers learn of the outage instead of waiting.
 */
public abstract sealed class RedisConnections implements AutoCloseable {
  /** How long a command (or a connection attempt) may take before Redis counts as unavailable. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  private final LettuceClient client;
  private final ClientResources resources;
  private final String description;
  private final Duration timeout;
  private final Object connectLock = new Object();
  private volatile StatefulConnection<String, String> connection;
  private volatile RedisClusterAsyncCommands<String, String> commands;
  private volatile StatefulRedisPubSubConnection<String, String> pubSub;
  private volatile boolean closed;

  private RedisConnections(
      LettuceClient client, ClientResources resources, String description, Duration timeout) {
    this.client = client;
    this.resources = resources;
    this.description = description;
    this.timeout = timeout;
  }

  /** Opens (lazily) what the configuration names: a standalone/Sentinel server or cluster seeds. */
  public static RedisConnections open(OperatorConfig config) {
    return open(config, DEFAULT_TIMEOUT);
  }

  public static RedisConnections open(OperatorConfig config, Duration timeout) {
    if (config.redisCluster()) {
      return cluster(config.redisUris(), config.redisPassword(), timeout);
    }
    return standalone(config.redisUri(), config.redisPassword(), timeout);
  }

  /** One server by URI (password in the URI, if any), with the default timeout. */
  public static RedisConnections standalone(String uri) {
    return standalone(uri, Optional.empty(), DEFAULT_TIMEOUT);
  }

  /**
   * One server: {@code redis://}, {@code rediss://} or {@code
   * redis-sentinel://host:port,...#master}.
   */
  public static RedisConnections standalone(
      String uri, Optional<String> password, Duration timeout) {
    ClientResources resources = resources();
    RedisClient client = RedisClient.create(resources, redisUri(uri, password, timeout));
    client.setOptions(
        ClientOptions.builder()
            .autoReconnect(true)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            .build());
    return new Standalone(client, resources, RedisUris.redact(uri), timeout);
  }

  /** Redis Cluster from seed URIs; the topology is refreshed periodically and on redirects. */
  public static RedisConnections cluster(
      List<String> seeds, Optional<String> password, Duration timeout) {
    if (seeds.isEmpty()) {
      throw new IllegalArgumentException("Redis Cluster needs at least one seed URI");
    }
    List<RedisURI> uris = seeds.stream().map(seed -> redisUri(seed, password, timeout)).toList();
    ClientResources resources = resources();
    RedisClusterClient client = RedisClusterClient.create(resources, uris);
    client.setOptions(
        ClusterClientOptions.builder()
            .autoReconnect(true)
            .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
            .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            .topologyRefreshOptions(
                ClusterTopologyRefreshOptions.builder()
                    .enablePeriodicRefresh(Duration.ofSeconds(30))
                    .enableAllAdaptiveRefreshTriggers()
                    .build())
            .build());
    String description = seeds.stream().map(RedisUris::redact).collect(Collectors.joining(","));
    return new Cluster(client, resources, description, timeout);
  }

  /**
   * Reconnect attempts back off from 10 ms to at most 2 s, so a restarted Redis is found quickly.
   */
  private static ClientResources resources() {
    return DefaultClientResources.builder()
        .reconnectDelay(
            Delay.exponential(
                Duration.ofMillis(10), Duration.ofSeconds(2), 2, TimeUnit.MILLISECONDS))
        .build();
  }

  /**
   * Parses one URI the Lettuce way and applies the password (which overrides one in the URI) and
   * the command timeout. For Sentinel the password is the data node's; sentinels keep their own.
   */
  static RedisURI redisUri(String uri, Optional<String> password, Duration timeout) {
    RedisURI redisUri;
    try {
      redisUri = RedisURI.create(uri);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'" + RedisUris.redact(uri) + "' is not a Redis URI: " + e.getMessage());
    }
    password.ifPresent(
        secret -> {
          // Keep an ACL user named in the URI (redis://user:old@host); only the password changes.
          RedisCredentials fromUri = redisUri.getCredentialsProvider().resolveCredentials().block();
          String username = fromUri == null ? null : fromUri.getUsername();
          if (username != null) {
            redisUri.setAuthentication(username, secret);
          } else {
            redisUri.setAuthentication(secret);
          }
        });
    redisUri.setTimeout(timeout);
    return redisUri;
  }

  /** The redacted URI(s), fit for logs and messages. */
  public String description() {
    return description;
  }

  public Duration timeout() {
    return timeout;
  }

  /** The async commands, connecting first if needed. */
  public RedisClusterAsyncCommands<String, String> commands() {
    RedisClusterAsyncCommands<String, String> current = commands;
    if (current != null) {
      return current;
    }
    synchronized (connectLock) {
      if (commands == null) {
        if (closed) {
          throw new ScheduleUnavailableException(
              "the Redis connection to " + description + " is closed", null);
        }
        try {
          StatefulConnection<String, String> opened = HandshakeRace.connect(client.connect());
          connection = opened;
          commands = client.asyncCommands().apply(opened);
        } catch (RuntimeException e) {
          throw unavailable("connect", e);
        }
        loadScripts(commands);
      }
      return commands;
    }
  }

  /** Waits for a command's result; any failure becomes a {@link ScheduleUnavailableException}. */
  public <T> T await(CompletionStage<T> future, String what) {
    try {
      return future.toCompletableFuture().get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ScheduleUnavailableException(
          "interrupted while waiting for Redis at " + description + " (" + what + ")", e);
    } catch (ExecutionException | CompletionException e) {
      throw unavailable(what, e.getCause() == null ? e : e.getCause());
    } catch (TimeoutException e) {
      throw new ScheduleUnavailableException(
          "Redis at "
              + description
              + " did not answer "
              + what
              + " within "
              + timeout.toMillis()
              + " ms",
          e);
    } catch (RuntimeException e) {
      throw unavailable(what, e);
    }
  }

  /**
   * Subscribes {@code listener} to a pub/sub channel on a dedicated connection (opened now if
   * needed). Lettuce re-subscribes after a reconnect. Throws when Redis cannot be reached; call
   * again later.
   */
  public void subscribe(String channel, Consumer<String> listener) {
    synchronized (connectLock) {
      if (pubSub != null) {
        return;
      }
      StatefulRedisPubSubConnection<String, String> opened;
      try {
        opened = HandshakeRace.connect(client.connectPubSub());
      } catch (RuntimeException e) {
        throw unavailable("connect for pub/sub", e);
      }
      opened.addListener(
          new RedisPubSubAdapter<>() {
            @Override
            public void message(String receivedChannel, String message) {
              if (channel.equals(receivedChannel)) {
                listener.accept(message);
              }
            }
          });
      try {
        await(opened.async().subscribe(channel), "SUBSCRIBE " + channel);
      } catch (ScheduleUnavailableException e) {
        opened.closeAsync();
        throw e;
      }
      pubSub = opened;
    }
  }

  /** True once the pub/sub subscription is in place. */
  public boolean subscribed() {
    return pubSub != null;
  }

  /** run_id of the server, or for a cluster the sorted run_ids of the masters, comma-separated. */
  public abstract String serverIdentity();

  @Override
  public void close() {
    synchronized (connectLock) {
      closed = true;
      if (pubSub != null) {
        pubSub.close();
      }
      if (connection != null) {
        connection.close();
      }
    }
    client.lettuce().shutdown(0, 2, TimeUnit.SECONDS);
    resources.shutdown(0, 2, TimeUnit.SECONDS);
  }

  /**
   * What a standalone and a cluster client do differently: how each opens its connections, and how
   * its connection yields the async commands both share.
   */
  private record LettuceClient(
      AbstractRedisClient lettuce,
      Supplier<StatefulConnection<String, String>> connect,
      Function<StatefulConnection<String, String>, RedisClusterAsyncCommands<String, String>>
          asyncCommands,
      Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub) {}

  /** Best effort: a script missing later (flush, restart, failover) falls back to EVAL once. */
  private void loadScripts(RedisClusterAsyncCommands<String, String> async) {
    for (LuaScript script : LuaScript.ALL) {
      try {
        await(async.scriptLoad(script.source()), "SCRIPT LOAD " + script.name());
      } catch (ScheduleUnavailableException ignored) {
        // EVALSHA falls back to EVAL on NOSCRIPT, which loads the script then.
      }
    }
  }

  ScheduleUnavailableException unavailable(String what, Throwable cause) {
    Throwable root = cause;
    while ((root instanceof CompletionException || root instanceof ExecutionException)
        && root.getCause() != null) {
      root = root.getCause();
    }
    String detail = messageChain(root);
    if (isAuthenticationError(detail)) {
      return new ScheduleUnavailableException(
          "Redis at "
              + description
              + " refused authentication ("
              + detail
              + "); check "
              + OperatorConfig.REDIS_PASSWORD
              + " or the password in "
              + OperatorConfig.REDIS_URI,
          root);
    }
    if (root instanceof RedisCommandExecutionException) {
      return new ScheduleUnavailableException(
          "Redis at " + description + " answered " + what + " with an error: " + detail, root);
    }
    return new ScheduleUnavailableException(
        "Redis at " + description + " is unavailable (" + what + "): " + detail, root);
  }

  private static boolean isAuthenticationError(String message) {
    return message.contains("WRONGPASS")
        || message.contains("NOAUTH")
        || message.contains("invalid password")
        || message.contains("invalid username-password");
  }

  /** The messages of an exception and its causes, so "Unable to connect" carries the reason. */
  private static String messageChain(Throwable error) {
    List<String> messages = new ArrayList<>();
    for (Throwable t = error; t != null && messages.size() < 4; t = t.getCause()) {
      String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (messages.isEmpty() || !messages.get(messages.size() - 1).contains(message)) {
        messages.add(message);
      }
    }
    return String.join(": ", messages);
  }

  private static final class Standalone extends RedisConnections {
    Standalone(
        RedisClient client, ClientResources resources, String description, Duration timeout) {
      super(
          new LettuceClient(
              client,
              client::connect,
              connection -> ((StatefulRedisConnection<String, String>) connection).async(),
              client::connectPubSub),
          resources,
          description,
          timeout);
    }

    @Override
    public String serverIdentity() {
      return runId(await(commands().info("server"), "INFO server"));
    }
  }

  private static final class Cluster extends RedisConnections {
    private final RedisClusterClient client;

    Cluster(
        RedisClusterClient client,
        ClientResources resources,
        String description,
        Duration timeout) {
      super(
          new LettuceClient(
              client,
              client::connect,
              connection -> ((StatefulRedisClusterConnection<String, String>) connection).async(),
              client::connectPubSub),
          resources,
          description,
          timeout);
      this.client = client;
    }

    @Override
    public String serverIdentity() {
      commands();
      StatefulRedisClusterConnection<String, String> cluster = clusterConnection();
      try {
        client.refreshPartitions();
      } catch (RuntimeException e) {
        throw unavailable("CLUSTER NODES", e);
      }
      List<String> runIds = new ArrayList<>();
      for (RedisClusterNode node : cluster.getPartitions()) {
        if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
          StatefulRedisConnection<String, String> nodeConnection;
          try {
            nodeConnection = cluster.getConnection(node.getNodeId());
          } catch (RuntimeException e) {
            throw unavailable("connect to cluster node " + node.getUri(), e);
          }
          runIds.add(runId(await(nodeConnection.async().info("server"), "INFO server")));
        }
      }
      if (runIds.isEmpty()) {
        throw new ScheduleUnavailableException(
            "Redis Cluster at " + description() + " has no master with slots", null);
      }
      runIds.sort(null);
      return String.join(",", runIds);
    }

    @SuppressWarnings("unchecked")
    private StatefulRedisClusterConnection<String, String> clusterConnection() {
      return (StatefulRedisClusterConnection<String, String>) Objects.requireNonNull(connection());
    }
  }

  /** The open connection, after {@link #commands()} succeeded. */
  StatefulConnection<String, String> connection() {
    return connection;
  }

  static String runId(String info) {
    return info.lines()
        .filter(line -> line.startsWith("run_id:"))
        .map(line -> line.substring("run_id:".length()).trim())
        .findFirst()
        .orElseThrow(() -> new ScheduleUnavailableException("INFO server has no run_id", null));
  }
}
