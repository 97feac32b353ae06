package io.delayedtask.operator.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The sink delivery's settings (shared/API.md, the DELAYEDTASK_SINK_* variables).
 *
 * @param allowedUriPrefixes  DELAYEDTASK_SINK_ALLOWED_URIS: prefixes an absolute sink.uri may start with
 * @param clusterDomain       DELAYEDTASK_SINK_CLUSTER_DOMAIN, default cluster.local
 * @param serviceAccount      DELAYEDTASK_SINK_SERVICE_ACCOUNT, default delayedtask-sender
 * @param maxInFlight         DELAYEDTASK_SINK_MAX_IN_FLIGHT, default 256
 * @param maxInFlightPerHost  DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST, default 32
 * @param maxInFlightPerNamespace DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_NAMESPACE, default 32
 */
public record SinkConfig(List<String> allowedUriPrefixes, String clusterDomain, String serviceAccount,
    int maxInFlight, int maxInFlightPerHost, int maxInFlightPerNamespace) {
  public static final String ALLOWED_URIS = "DELAYEDTASK_SINK_ALLOWED_URIS";
  public static final String CLUSTER_DOMAIN = "DELAYEDTASK_SINK_CLUSTER_DOMAIN";
  public static final String SERVICE_ACCOUNT = "DELAYEDTASK_SINK_SERVICE_ACCOUNT";
  public static final String MAX_IN_FLIGHT = "DELAYEDTASK_SINK_MAX_IN_FLIGHT";
  public static final String MAX_IN_FLIGHT_PER_HOST = "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST";
  public static final String MAX_IN_FLIGHT_PER_NAMESPACE = "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_NAMESPACE";

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final String SUBDOMAIN_RULE =
      "a DNS subdomain name: lower-case letters, digits, '-' and '.', at most 253 characters";
  /** An IPv4 loopback literal: 127.0.0.0/8, written as four decimal octets. */
  private static final Pattern IPV4_LOOPBACK = Pattern.compile("127(\\.(25[0-5]|2[0-4]\\d|1?\\d?\\d)){3}");

  public SinkConfig {
    allowedUriPrefixes = List.copyOf(allowedUriPrefixes);
    Objects.requireNonNull(clusterDomain, "clusterDomain");
    Objects.requireNonNull(serviceAccount, "serviceAccount");
  }

  /** With the default per-namespace cap (32). */
  public SinkConfig(List<String> allowedUriPrefixes, String clusterDomain, String serviceAccount, int maxInFlight,
      int maxInFlightPerHost) {
    this(allowedUriPrefixes, clusterDomain, serviceAccount, maxInFlight, maxInFlightPerHost, 32);
  }

  public static SinkConfig defaults() {
    return new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 256, 32, 32);
  }

  /**
   * Reads the DELAYEDTASK_SINK_* variables from an environment map, typically {@code System.getenv()}.
   *
   * @throws ConfigException naming the first bad variable and what it accepts
   */
  public static SinkConfig fromEnvironment(Map<String, String> env) {
    SinkConfig defaults = defaults();
    List<String> prefixes = allowedPrefixes(env.get(ALLOWED_URIS));
    String clusterDomain = subdomain(env, CLUSTER_DOMAIN, defaults.clusterDomain());
    String serviceAccount = subdomain(env, SERVICE_ACCOUNT, defaults.serviceAccount());
    int maxInFlight = positive(env, MAX_IN_FLIGHT, defaults.maxInFlight());
    int maxInFlightPerHost = positive(env, MAX_IN_FLIGHT_PER_HOST, defaults.maxInFlightPerHost());
    int maxInFlightPerNamespace = positive(env, MAX_IN_FLIGHT_PER_NAMESPACE, defaults.maxInFlightPerNamespace());
    return new SinkConfig(prefixes, clusterDomain, serviceAccount, maxInFlight, maxInFlightPerHost,
        maxInFlightPerNamespace);
  }

  /** Whether an absolute sink URI is allowed: it starts with one of the prefixes. */
  public boolean allows(String absoluteUri) {
    return allowedUriPrefixes.stream().anyMatch(absoluteUri::startsWith);
  }

  /**
   * Whether a delivery may reach a loopback address: only when an allowed prefix names a loopback
   * host ({@code 127.x.x.x}, {@code [::1]} or {@code localhost}), so the operator's own process and
   * node-local services stay out of reach unless the operator's installer asked for them.
   */
  public boolean loopbackAllowed() {
    return allowedUriPrefixes.stream().map(SinkConfig::host).anyMatch(SinkConfig::isLoopbackHost);
  }

  private static boolean isLoopbackHost(String host) {
    String lower = host.toLowerCase(Locale.ROOT);
    return lower.equals("localhost") || lower.equals("[::1]") || lower.equals("[0:0:0:0:0:0:0:1]")
        || IPV4_LOOPBACK.matcher(lower).matches();
  }

  private static List<String> allowedPrefixes(String value) {
    if (value == null || value.isBlank()) {
      return List.of();
    }
    List<String> prefixes = new ArrayList<>();
    for (String part : value.split(",")) {
      String prefix = part.trim();
      if (prefix.isEmpty()) {
        continue;
      }
      if (!isHttpUrlPrefix(prefix)) {
        throw new ConfigException(ALLOWED_URIS + " has '" + prefix + "', which is not an absolute http:// or "
            + "https:// URL prefix with a host; give comma-separated prefixes such as "
            + "https://hooks.example.com/,http://127.0.0.1:, or leave it unset to allow no absolute sink.uri");
      }
      prefixes.add(prefix);
    }
    return prefixes;
  }

  /**
   * An http(s) URL prefix with a host. A prefix may stop anywhere after the host ({@code http://127.0.0.1:}
   * ends before its port), so it is checked as written up to the end of the host, not as a whole URI.
   */
  private static boolean isHttpUrlPrefix(String prefix) {
    String lower = prefix.toLowerCase(Locale.ROOT);
    if (!lower.startsWith("http://") && !lower.startsWith("https://")) {
      return false;
    }
    String host = host(prefix);
    if (host.isEmpty() || host.contains("@")) {
      return false;
    }
    try {
      // The host part alone must make a valid absolute URI.
      URI uri = new URI("http://" + host + "/");
      return uri.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** The host of a URL prefix as written: between "://" and the first ':' (port), '/', '?' or '#'. */
  private static String host(String prefix) {
    String rest = prefix.substring(prefix.indexOf("://") + 3);
    if (rest.startsWith("[")) {
      int close = rest.indexOf(']');
      return close < 0 ? "" : rest.substring(0, close + 1);
    }
    int end = rest.length();
    for (char stop : new char[] {':', '/', '?', '#'}) {
      int at = rest.indexOf(stop);
      if (at >= 0) {
        end = Math.min(end, at);
      }
    }
    return rest.substring(0, end);
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
    throw new ConfigException(name + "='" + value + "' is not valid; use a whole number from 1 to " + Integer.MAX_VALUE);
  }
}
