package io.delayedtask.operator.config;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The operator's configuration, built once from the environment (see docs/reference.md, "The
 * operator process") and passed through constructors. Every value is checked here, so a bad one
 * stops the process at start with a message naming the variable and what it accepts.
 */
public record OperatorConfig(
    String redisUri,
    boolean redisCluster,
    int redisShards,
    Optional<String> redisPassword,
    String keyPrefix,
    Set<String> namespaces,
    boolean leaderElection,
    String leaseName,
    String leaseNamespace,
    String identity,
    Duration resyncInterval,
    int httpPort,
    Duration leaseDuration,
    Duration claimLease,
    Optional<Duration> finishedTtl,
    SinkConfig sink,
    Optional<Duration> defaultStartingDeadline,
    List<String> admissionPolicyBindings) {

  public static final String REDIS_URI = "DELAYEDTASK_REDIS_URI";
  public static final String REDIS_CLUSTER = "DELAYEDTASK_REDIS_CLUSTER";
  public static final String REDIS_SHARDS = "DELAYEDTASK_REDIS_SHARDS";
  public static final String REDIS_PASSWORD = "DELAYEDTASK_REDIS_PASSWORD";
  public static final String KEY_PREFIX = "DELAYEDTASK_KEY_PREFIX";
  public static final String NAMESPACES = "DELAYEDTASK_NAMESPACES";
  public static final String LEADER_ELECTION = "DELAYEDTASK_LEADER_ELECTION";
  public static final String LEASE_NAME = "DELAYEDTASK_LEASE_NAME";
  public static final String LEASE_NAMESPACE = "DELAYEDTASK_LEASE_NAMESPACE";
  public static final String IDENTITY = "DELAYEDTASK_IDENTITY";
  public static final String RESYNC_SECONDS = "DELAYEDTASK_RESYNC_SECONDS";
  public static final String HTTP_PORT = "DELAYEDTASK_HTTP_PORT";
  public static final String LEASE_DURATION_SECONDS = "DELAYEDTASK_LEASE_DURATION_SECONDS";
  public static final String CLAIM_LEASE_SECONDS = "DELAYEDTASK_CLAIM_LEASE_SECONDS";

  /** The default of {@link #LEASE_DURATION_SECONDS}. */
  public static final int DEFAULT_LEASE_SECONDS = 4;

  public static final String FINISHED_TTL_SECONDS = "DELAYEDTASK_FINISHED_TTL_SECONDS";
  public static final String DEFAULT_STARTING_DEADLINE_SECONDS =
      "DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS";
  public static final String ADMISSION_POLICY = "DELAYEDTASK_ADMISSION_POLICY";

  /**
   * The ValidatingAdmissionPolicyBindings of k8s/15-admission-policy.yaml (the chart sets its own
   * names).
   */
  public static final List<String> DEFAULT_ADMISSION_POLICY_BINDINGS =
      List.of("delayed-task-operator-author-rights", "delayed-task-operator-status-writer");

  /** The value of {@link #ADMISSION_POLICY} that turns the check off. */
  public static final String NO_ADMISSION_POLICY = "none";

  /**
   * Read by logback.xml itself; checked here so a bad value stops the process instead of silencing
   * it.
   */
  public static final String LOG_FORMAT = "DELAYEDTASK_LOG_FORMAT";

  public static final String LOG_LEVEL = "DELAYEDTASK_LOG_LEVEL";
  private static final Set<String> LOG_FORMATS = Set.of("text", "json");
  private static final Set<String> LOG_LEVELS =
      Set.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  /**
   * Where a pod learns its namespace, for the Lease's default namespace: the downward API ({@code
   * fieldRef: metadata.namespace}), which the chart and the k8s/ manifests set; without it, {@code
   * default}.
   */
  static final String POD_NAMESPACE = "POD_NAMESPACE";

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /**
   * Hash tags use braces and Redis keys are separated by ':' in our layout, so neither may appear.
   */
  private static final Pattern KEY_PREFIX_PATTERN = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

  private static final Set<String> REDIS_SCHEMES =
      Set.of("redis", "rediss", "redis-sentinel", "rediss-sentinel");

  public OperatorConfig {
    Objects.requireNonNull(redisUri);
    Objects.requireNonNull(redisPassword);
    Objects.requireNonNull(keyPrefix);
    namespaces = Set.copyOf(namespaces);
    Objects.requireNonNull(leaseName);
    Objects.requireNonNull(leaseNamespace);
    Objects.requireNonNull(identity);
    Objects.requireNonNull(resyncInterval);
    Objects.requireNonNull(leaseDuration);
    Objects.requireNonNull(claimLease);
    Objects.requireNonNull(finishedTtl);
    Objects.requireNonNull(sink);
    Objects.requireNonNull(defaultStartingDeadline);
    admissionPolicyBindings = List.copyOf(admissionPolicyBindings);
  }

  /**
   * False with {@code DELAYEDTASK_ADMISSION_POLICY=none}: Jobs and tokens without checking for the
   * policy.
   */
  public boolean checksAdmissionPolicy() {
    return !admissionPolicyBindings.isEmpty();
  }

  /**
   * How long the leader keeps trying to renew its Lease before it gives up leading: 2/3 of the
   * lease duration (4 s: 2.67 s), so one failed renewal (a retry period later) is survived. It
   * always exceeds 1.2 retry periods, as the fabric8 leader elector requires.
   */
  public Duration leaseRenewDeadline() {
    return Duration.ofMillis(leaseDuration.toMillis() * 2 / 3);
  }

  /**
   * How often the leader renews the Lease, and candidates try to acquire it: 3/10 of its duration
   * (4 s: every 1.2 s, so the Lease is written 0.83 times a second). A renewal is the Lease's one
   * write while a leader lives; candidates only read it, and a standby is nudged to try at once
   * when the Lease is released or runs out (leader/StandbyNudge), not at its next retry.
   */
  public Duration leaseRetryPeriod() {
    return Duration.ofMillis(Math.max(100, leaseDuration.toMillis() * 3 / 10));
  }

  /** True when the operator watches every namespace. */
  public boolean watchesAllNamespaces() {
    return namespaces.isEmpty();
  }

  /** The Redis URIs to connect to: one, or several cluster seeds. */
  public List<String> redisUris() {
    return RedisUris.split(redisUri);
  }

  /**
   * Reads the configuration from an environment map, typically {@code System.getenv()}.
   *
   * @throws ConfigException naming the first bad variable
   */
  public static OperatorConfig fromEnv(Map<String, String> env) {
    checkLogSettings(env);
    boolean cluster = bool(env, REDIS_CLUSTER, false);
    String redisUri = redisUri(env, cluster);
    // One shard keeps every entry in one slot, so on Redis Cluster on one master: more shards
    // spread the schedule (and the loss of a master) over the masters.
    int shards = integer(env, REDIS_SHARDS, 1, 1, 1024);
    Optional<String> password = Optional.ofNullable(blankToNull(env.get(REDIS_PASSWORD)));
    String keyPrefix =
        matching(
            env,
            KEY_PREFIX,
            "delayedtask",
            KEY_PREFIX_PATTERN,
            "1 to 64 letters, digits, '_', '.' or '-' (no ':' or braces: they structure the Redis keys)");
    Set<String> namespaces = namespaces(env);
    boolean leaderElection = bool(env, LEADER_ELECTION, true);
    String leaseName =
        matching(
            env,
            LEASE_NAME,
            "delayed-task-operator",
            DNS_SUBDOMAIN,
            "a DNS subdomain name: lower-case letters, digits, '-' and '.', at most 253 characters");
    String leaseNamespaceDefault =
        Optional.ofNullable(blankToNull(env.get(POD_NAMESPACE))).orElse("default");
    String leaseNamespace =
        matching(
            env,
            LEASE_NAMESPACE,
            leaseNamespaceDefault,
            DNS_LABEL,
            "a namespace name: lower-case letters, digits and '-', at most 63 characters");
    String identity =
        Optional.ofNullable(blankToNull(env.get(IDENTITY)))
            .or(() -> Optional.ofNullable(blankToNull(env.get("HOSTNAME"))))
            .orElseGet(() -> "delayed-task-operator-" + UUID.randomUUID());
    int resyncSeconds = integer(env, RESYNC_SECONDS, 300, 1, 86_400);
    int httpPort = integer(env, HTTP_PORT, 8080, 0, 65_535);
    // 4 s: a SIGKILLed leader costs at most about 4.5 s of firing, with the Lease written under
    // once
    // a second. At least 2 s, so the renew deadline and retry period derived from it stay apart
    // (see
    // leaseRenewDeadline); at most an hour, beyond which a dead leader stops the firing too long.
    int leaseSeconds = integer(env, LEASE_DURATION_SECONDS, DEFAULT_LEASE_SECONDS, 2, 3_600);
    // A claim must outlast the slowest firing (API requests with the client's retries), or another
    // poller takes it back while it is still being fired; at most a day.
    int claimLeaseSeconds = integer(env, CLAIM_LEASE_SECONDS, 60, 1, 86_400);
    Optional<Duration> finishedTtl =
        optionalSeconds(
            env,
            FINISHED_TTL_SECONDS,
            Long.MAX_VALUE,
            "the ttlSecondsAfterFinished of tasks that set none",
            "to keep finished tasks");
    // As the CRD bounds the field it defaults.
    Optional<Duration> defaultStartingDeadline =
        optionalSeconds(
            env,
            DEFAULT_STARTING_DEADLINE_SECONDS,
            DelayedTaskSpec.MAX_SECONDS,
            "the startingDeadlineSeconds of tasks that set none",
            "for no deadline");
    return new OperatorConfig(
        redisUri,
        cluster,
        shards,
        password,
        keyPrefix,
        namespaces,
        leaderElection,
        leaseName,
        leaseNamespace,
        identity,
        Duration.ofSeconds(resyncSeconds),
        httpPort,
        Duration.ofSeconds(leaseSeconds),
        Duration.ofSeconds(claimLeaseSeconds),
        finishedTtl,
        SinkConfig.fromEnvironment(env),
        defaultStartingDeadline,
        admissionPolicyBindings(env));
  }

  /**
   * The bindings whose presence (each with the policy it binds) the operator requires before it
   * creates a Job or sends a token; empty for {@code none}.
   */
  private static List<String> admissionPolicyBindings(Map<String, String> env) {
    String value = blankToNull(env.get(ADMISSION_POLICY));
    if (value == null) {
      return DEFAULT_ADMISSION_POLICY_BINDINGS;
    }
    if (value.trim().equals(NO_ADMISSION_POLICY)) {
      return List.of();
    }
    List<String> names = commaList(value);
    for (String name : names) {
      if (name.equals(NO_ADMISSION_POLICY)) {
        throw new ConfigException(
            ADMISSION_POLICY
                + "='"
                + value
                + "' mixes none with binding names; give either "
                + "none alone (no check) or comma-separated ValidatingAdmissionPolicyBinding names");
      }
      if (!DNS_SUBDOMAIN.matcher(name).matches()) {
        throw new ConfigException(
            ADMISSION_POLICY
                + " has '"
                + name
                + "', which is not a "
                + "ValidatingAdmissionPolicyBinding name; give comma-separated binding names (lower-case letters, digits, "
                + "'-' and '.'), or none to create Jobs and send tokens without the admission policy");
      }
    }
    if (names.isEmpty()) {
      throw new ConfigException(
          ADMISSION_POLICY
              + "='"
              + value
              + "' names no binding; give comma-separated "
              + "ValidatingAdmissionPolicyBinding names, or none to turn the check off");
    }
    return names;
  }

  /**
   * A whole number of seconds from 0 to {@code max}, or empty when unset; {@code meaning} and
   * {@code whenUnset} complete the message that a bad value gets.
   */
  private static Optional<Duration> optionalSeconds(
      Map<String, String> env, String name, long max, String meaning, String whenUnset) {
    String value = blankToNull(env.get(name));
    if (value == null) {
      return Optional.empty();
    }
    try {
      long seconds = Long.parseLong(value.trim());
      if (seconds >= 0 && seconds <= max) {
        return Optional.of(Duration.ofSeconds(seconds));
      }
    } catch (NumberFormatException ignored) {
      // reported below with what it accepts
    }
    String range = max == Long.MAX_VALUE ? "of seconds >= 0" : "of seconds from 0 to " + max;
    throw new ConfigException(
        name
            + "='"
            + value
            + "' is not valid; use a whole number "
            + range
            + " ("
            + meaning
            + "), or leave it unset "
            + whenUnset);
  }

  /**
   * The comma-separated items of a variable, trimmed, without empty or repeated ones, in their
   * order; empty when the variable is unset or blank.
   */
  private static List<String> commaList(String value) {
    if (value == null) {
      return List.of();
    }
    return Arrays.stream(value.split(","))
        .map(String::trim)
        .filter(item -> !item.isEmpty())
        .distinct()
        .toList();
  }

  private static String redisUri(Map<String, String> env, boolean cluster) {
    String value =
        Optional.ofNullable(blankToNull(env.get(REDIS_URI))).orElse("redis://localhost:6379");
    List<String> uris = RedisUris.split(value);
    if (!cluster && uris.size() > 1) {
      throw new ConfigException(
          REDIS_URI
              + "='"
              + RedisUris.redact(value)
              + "' names several nodes; "
              + "set "
              + REDIS_CLUSTER
              + "=true for Redis Cluster seeds, or give one redis://, rediss:// or "
              + "redis-sentinel:// URI");
    }
    for (String uri : uris) {
      String scheme;
      try {
        scheme = new URI(uri).getScheme();
      } catch (URISyntaxException e) {
        scheme = null;
      }
      if (scheme == null || !REDIS_SCHEMES.contains(scheme)) {
        throw new ConfigException(
            REDIS_URI
                + "='"
                + RedisUris.redact(value)
                + "' is not a Redis URI; "
                + "use redis://host:port, rediss://host:port (TLS) or redis-sentinel://host:port#master");
      }
      if (cluster && scheme.contains("sentinel")) {
        throw new ConfigException(
            REDIS_URI
                + " uses Sentinel while "
                + REDIS_CLUSTER
                + "=true; "
                + "Redis Cluster seeds are redis:// or rediss:// URIs");
      }
    }
    return value;
  }

  private static Set<String> namespaces(Map<String, String> env) {
    List<String> namespaces = commaList(blankToNull(env.get(NAMESPACES)));
    for (String namespace : namespaces) {
      if (!DNS_LABEL.matcher(namespace).matches()) {
        throw new ConfigException(
            NAMESPACES
                + " has '"
                + namespace
                + "', which is not a namespace name; "
                + "give comma-separated namespace names (lower-case letters, digits, '-'), or leave it unset "
                + "to watch all namespaces");
      }
    }
    return new LinkedHashSet<>(namespaces);
  }

  private static boolean bool(Map<String, String> env, String name, boolean fallback) {
    String value = blankToNull(env.get(name));
    if (value == null) {
      return fallback;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new ConfigException(name + "='" + value + "' is not a boolean; use true or false");
    };
  }

  /**
   * logback.xml reads both variables; a value it cannot use would silence the log, so it stops the
   * process.
   */
  private static void checkLogSettings(Map<String, String> env) {
    String format = blankToNull(env.get(LOG_FORMAT));
    if (format != null && !LOG_FORMATS.contains(format)) {
      throw new ConfigException(
          LOG_FORMAT + "='" + format + "' is not valid; use text (the default) or json");
    }
    String level = blankToNull(env.get(LOG_LEVEL));
    if (level != null && !LOG_LEVELS.contains(level.toUpperCase(Locale.ROOT))) {
      throw new ConfigException(
          LOG_LEVEL
              + "='"
              + level
              + "' is not valid; use TRACE, DEBUG, INFO (the default), WARN, "
              + "ERROR or OFF");
    }
  }

  private static int integer(Map<String, String> env, String name, int fallback, int min, int max) {
    String value = blankToNull(env.get(name));
    if (value == null) {
      return fallback;
    }
    try {
      int parsed = Integer.parseInt(value.trim());
      if (parsed >= min && parsed <= max) {
        return parsed;
      }
    } catch (NumberFormatException ignored) {
      // reported below with the accepted range
    }
    throw new ConfigException(
        name + "='" + value + "' is not valid; use a whole number from " + min + " to " + max);
  }

  private static String matching(
      Map<String, String> env, String name, String fallback, Pattern pattern, String accepts) {
    String value = blankToNull(env.get(name));
    if (value == null) {
      return fallback;
    }
    if (!pattern.matcher(value.trim()).matches()) {
      throw new ConfigException(name + "='" + value + "' is not valid; use " + accepts);
    }
    return value.trim();
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value;
  }

  /** Never print the password, whatever the caller logs. */
  @Override
  public String toString() {
    return "OperatorConfig[redisUri="
        + RedisUris.redact(redisUri)
        + ", redisCluster="
        + redisCluster
        + ", redisShards="
        + redisShards
        + ", redisPassword="
        + (redisPassword.isPresent() ? "<set>" : "<none>")
        + ", keyPrefix="
        + keyPrefix
        + ", namespaces="
        + (namespaces.isEmpty() ? "<all>" : namespaces)
        + ", leaderElection="
        + leaderElection
        + ", lease="
        + leaseNamespace
        + "/"
        + leaseName
        + ", identity="
        + identity
        + ", resyncInterval="
        + resyncInterval
        + ", httpPort="
        + httpPort
        + ", leaseDuration="
        + leaseDuration
        + ", claimLease="
        + claimLease
        + ", finishedTtl="
        + finishedTtl.map(Duration::toString).orElse("<none>")
        + ", defaultStartingDeadline="
        + defaultStartingDeadline.map(Duration::toString).orElse("<none>")
        + ", admissionPolicy="
        + (admissionPolicyBindings.isEmpty()
            ? NO_ADMISSION_POLICY
            : String.join(",", admissionPolicyBindings))
        + "]";
  }
}
