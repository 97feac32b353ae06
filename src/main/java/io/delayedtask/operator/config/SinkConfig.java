package io.delayedtask.operator.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The sink delivery's settings (docs/reference.md, the DELAYEDTASK_SINK_* variables).
 *
 * @param allowedUris DELAYEDTASK_SINK_ALLOWED_URIS: the entries (URLs) that allow an absolute
 *     sink.uri or the URL an ExternalName Service yields ({@link AllowedUris})
 * @param clusterDomain DELAYEDTASK_SINK_CLUSTER_DOMAIN, default cluster.local
 * @param serviceAccount DELAYEDTASK_SINK_SERVICE_ACCOUNT, default delayedtask-sender
 * @param maxInFlight DELAYEDTASK_SINK_MAX_IN_FLIGHT, default 256
 * @param maxInFlightPerHost DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST, default 32
 * @param maxInFlightPerNamespace DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_NAMESPACE, default 32
 * @param signingSecret DELAYEDTASK_SINK_SIGNING_SECRET, default delayedtask-signing: the Secret, in
 *     each task's namespace, whose keys {@code sink.signing.key} names
 */
public record SinkConfig(
    List<String> allowedUris,
    String clusterDomain,
    String serviceAccount,
    int maxInFlight,
    int maxInFlightPerHost,
    int maxInFlightPerNamespace,
    String signingSecret) {
  public static final String ALLOWED_URIS = "DELAYEDTASK_SINK_ALLOWED_URIS";
  public static final String CLUSTER_DOMAIN = "DELAYEDTASK_SINK_CLUSTER_DOMAIN";
  public static final String SERVICE_ACCOUNT = "DELAYEDTASK_SINK_SERVICE_ACCOUNT";
  public static final String MAX_IN_FLIGHT = "DELAYEDTASK_SINK_MAX_IN_FLIGHT";
  public static final String MAX_IN_FLIGHT_PER_HOST = "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST";
  public static final String MAX_IN_FLIGHT_PER_NAMESPACE =
      "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_NAMESPACE";
  public static final String SIGNING_SECRET = "DELAYEDTASK_SINK_SIGNING_SECRET";
  public static final String DEFAULT_SIGNING_SECRET = "delayedtask-signing";

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final String SUBDOMAIN_RULE =
      "a DNS subdomain name: lower-case letters, digits, '-' and '.', at most 253 characters";

  /**
   * @throws ConfigException when an entry of {@code allowedUris} is not one (named, with why)
   */
  public SinkConfig {
    allowedUris = List.copyOf(allowedUris);
    allowlistOf(allowedUris);
    Objects.requireNonNull(clusterDomain, "clusterDomain");
    Objects.requireNonNull(serviceAccount, "serviceAccount");
    Objects.requireNonNull(signingSecret, "signingSecret");
  }

  /** With the default signing Secret (delayedtask-signing). */
  public SinkConfig(
      List<String> allowedUris,
      String clusterDomain,
      String serviceAccount,
      int maxInFlight,
      int maxInFlightPerHost,
      int maxInFlightPerNamespace) {
    this(
        allowedUris,
        clusterDomain,
        serviceAccount,
        maxInFlight,
        maxInFlightPerHost,
        maxInFlightPerNamespace,
        DEFAULT_SIGNING_SECRET);
  }

  /** With the default per-namespace cap (32). */
  public SinkConfig(
      List<String> allowedUris,
      String clusterDomain,
      String serviceAccount,
      int maxInFlight,
      int maxInFlightPerHost) {
    this(allowedUris, clusterDomain, serviceAccount, maxInFlight, maxInFlightPerHost, 32);
  }

  public static SinkConfig defaults() {
    return new SinkConfig(
        List.of(), "cluster.local", "delayedtask-sender", 256, 32, 32, DEFAULT_SIGNING_SECRET);
  }

  /**
   * Reads the DELAYEDTASK_SINK_* variables from an environment map, typically {@code
   * System.getenv()}.
   *
   * @throws ConfigException naming the first bad variable and what it accepts
   */
  public static SinkConfig fromEnvironment(Map<String, String> env) {
    SinkConfig defaults = defaults();
    List<String> allowed = entries(env.get(ALLOWED_URIS));
    String clusterDomain = subdomain(env, CLUSTER_DOMAIN, defaults.clusterDomain());
    String serviceAccount = subdomain(env, SERVICE_ACCOUNT, defaults.serviceAccount());
    int maxInFlight = positive(env, MAX_IN_FLIGHT, defaults.maxInFlight());
    int maxInFlightPerHost = positive(env, MAX_IN_FLIGHT_PER_HOST, defaults.maxInFlightPerHost());
    int maxInFlightPerNamespace =
        positive(env, MAX_IN_FLIGHT_PER_NAMESPACE, defaults.maxInFlightPerNamespace());
    String signingSecret = subdomain(env, SIGNING_SECRET, defaults.signingSecret());
    return new SinkConfig(
        allowed,
        clusterDomain,
        serviceAccount,
        maxInFlight,
        maxInFlightPerHost,
        maxInFlightPerNamespace,
        signingSecret);
  }

  /** The entries, parsed (they were checked when this was made, so this does not throw). */
  public AllowedUris allowlist() {
    return allowlistOf(allowedUris);
  }

  /** Whether an entry allows {@code absoluteUri} (compared by parts: {@link AllowedUris}). */
  public boolean allows(String absoluteUri) {
    return allowlist().entryAllowing(absoluteUri).isPresent();
  }

  /**
   * Whether an entry allows {@code absoluteUri} for a task of {@code namespace} ({@code
   * {namespace}} entries too).
   */
  public boolean allows(String absoluteUri, String namespace) {
    return allowlist().entryAllowing(absoluteUri, namespace).isPresent();
  }

  private static AllowedUris allowlistOf(List<String> entries) {
    try {
      return AllowedUris.of(entries);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          ALLOWED_URIS
              + " has "
              + e.getMessage()
              + "; give comma-separated absolute http:// "
              + "or https:// URLs such as https://hooks.example.com/acme,http://127.0.0.1:8099, or leave it unset to "
              + "allow no absolute sink.uri");
    }
  }

  private static List<String> entries(String value) {
    if (value == null || value.isBlank()) {
      return List.of();
    }
    List<String> entries = new ArrayList<>();
    for (String part : value.split(",")) {
      String entry = part.trim();
      if (!entry.isEmpty()) {
        entries.add(entry);
      }
    }
    return entries;
  }

  private static String subdomain(Map<String, String> env, String name, String fallback) {
    String value = env.get(name);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    if (!DNS_SUBDOMAIN.matcher(value.trim()).matches()) {
      throw new ConfigException(name + "='" + value + "' is not valid; use " + SUBDOMAIN_RULE);
    }
    return value.trim();
  }

  private static int positive(Map<String, String> env, String name, int fallback) {
    String value = env.get(name);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      int parsed = Integer.parseInt(value.trim());
      if (parsed >= 1) {
        return parsed;
      }
    } catch (NumberFormatException ignored) {
      // reported below with what it accepts
    }
    throw new ConfigException(
        name + "='" + value + "' is not valid; use a whole number from 1 to " + Integer.MAX_VALUE);
  }
}
