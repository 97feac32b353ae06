package io.delayedtask.operator.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The real API server's audit log (JSON lines, level Metadata, RequestReceived stage omitted), read
 * per user. A request is taken once: at ResponseComplete, or at ResponseStarted for a watch (which
 * completes only when it ends).
 */
public final class AuditLog {
  /** Everything at Metadata level: who, which verb, which object; no bodies. */
  public static final String POLICY =
      """
      apiVersion: audit.k8s.io/v1
      kind: Policy
      omitStages: ["RequestReceived"]
      rules:
      - level: Metadata
      """;

  /**
   * One request as the API server authorized and answered it.
   *
   * @param group the API group, "" for the core group; null for a non-resource URL (/version)
   * @param namespace null for a cluster-wide request
   * @param name the object named by the URL ({@code .../leases/NAME}), what RBAC's resourceNames
   *     match; null for a collection (list, watch, create)
   * @param decision the authorizer's "allow" or "forbid"
   * @param reason the authorizer's reason, e.g. {@code RBAC: allowed by ClusterRoleBinding "x" of
   *     ...}
   */
  public record Request(
      Instant received,
      String verb,
      String group,
      String resource,
      String subresource,
      String namespace,
      String name,
      String uri,
      int code,
      String decision,
      String reason) {

    /** "group/resource[/subresource]" as RBAC rules name it ("/events" for the core group). */
    public String target() {
      return group + "/" + resource + (subresource == null ? "" : "/" + subresource);
    }

    public boolean isResource() {
      return group != null;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path file;

  public AuditLog(Path file) {
    this.file = file;
  }

  /**
   * A log under {@code dir} with the policy beside it; {@link #apiServerFlags()} has the flags to
   * write it.
   */
  public static AuditLog in(Path dir) {
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("audit-policy.yaml"), POLICY);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new AuditLog(
        dir.resolve("audit-" + System.currentTimeMillis() + ".log").toAbsolutePath());
  }

  /** kube-apiserver flags writing this log with {@link #POLICY} (from {@link #in}). */
  public String[] apiServerFlags() {
    return new String[] {
      "--audit-policy-file=" + file.resolveSibling("audit-policy.yaml"),
      "--audit-log-path=" + file,
      // lumberjack rotates at 100 MB when maxsize is 0: a 50,000-task run writes more than that
      "--audit-log-maxsize=100000"
    };
  }

  public Path file() {
    return file;
  }

  /**
   * {@code user}'s requests received in [from, to], counted by "verb resource[/sub][ code]" (code
   * when not 2xx).
   */
  public Map<String, Long> count(String user, Instant from, Instant to) {
    Map<String, Long> counts = new TreeMap<>();
    for (Request request : requests(user)) {
      if (request.received().isBefore(from) || request.received().isAfter(to)) {
        continue;
      }
      String resource =
          request.isResource()
              ? request.resource()
                  + (request.subresource() == null ? "" : "/" + request.subresource())
              : request.uri().replaceFirst("\\?.*", "");
      String key =
          request.verb() + " " + resource + (request.code() < 300 ? "" : " " + request.code());
      counts.merge(key, 1L, Long::sum);
    }
    return counts;
  }

  /**
   * Every request of {@code user}, once each, in the order received. A request refused before it
   * started (a forbidden watch ends at once) is taken at ResponseComplete.
   */
  public List<Request> requests(String user) {
    Map<String, Request> byAuditId = new LinkedHashMap<>();
    if (!Files.exists(file)) {
      return List.of();
    }
    try (BufferedReader lines = Files.newBufferedReader(file)) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (!line.contains(user)) {
          continue; // cheap filter before parsing
        }
        JsonNode event = JSON.readTree(line);
        String stage = event.path("stage").asText();
        if (!(stage.equals("ResponseStarted")
                || stage.equals("ResponseComplete")
                || stage.equals("Panic"))
            || !user.equals(event.path("user").path("username").asText())) {
          continue;
        }
        byAuditId.putIfAbsent(event.path("auditID").asText(), request(event));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not read the audit log " + file, e);
    }
    return new ArrayList<>(byAuditId.values());
  }

  private static Request request(JsonNode event) {
    JsonNode ref = event.path("objectRef");
    String uri = event.path("requestURI").asText();
    JsonNode annotations = event.path("annotations");
    int code = event.path("responseStatus").path("code").asInt(200);
    Instant received = Instant.parse(event.path("requestReceivedTimestamp").asText());
    String verb = event.path("verb").asText();
    String decision = annotations.path("authorization.k8s.io/decision").asText("");
    String reason = annotations.path("authorization.k8s.io/reason").asText("");
    if (ref.isMissingNode()) {
      return new Request(received, verb, null, null, null, null, null, uri, code, decision, reason);
    }
    String resource = ref.path("resource").asText();
    String namespace = ref.hasNonNull("namespace") ? ref.path("namespace").asText() : null;
    String name = nameInUrl(uri, namespace, resource);
    if (name == null && (verb.equals("list") || verb.equals("watch"))) {
      name = nameInFieldSelector(uri);
    }
    return new Request(
        received,
        verb,
        ref.path("apiGroup").asText(""),
        resource,
        ref.hasNonNull("subresource") ? ref.path("subresource").asText() : null,
        namespace,
        name,
        uri,
        code,
        decision,
        reason);
  }

  /**
   * The name a list or watch is restricted to by the field selector {@code metadata.name=NAME}: the
   * authorizer sees NAME, so resourceNames may grant it.
   */
  static String nameInFieldSelector(String uri) {
    int query = uri.indexOf('?');
    if (query < 0) {
      return null;
    }
    for (String parameter : uri.substring(query + 1).split("&")) {
      if (parameter.startsWith("fieldSelector=")) {
        String selector =
            java.net.URLDecoder.decode(
                parameter.substring("fieldSelector=".length()),
                java.nio.charset.StandardCharsets.UTF_8);
        java.util.regex.Matcher name =
            java.util.regex.Pattern.compile("(?:^|,)metadata\\.name==?([^,]+)(?:,|$)")
                .matcher(selector);
        return name.find() ? name.group(1) : null;
      }
    }
    return null;
  }

  /**
   * The path segment after the resource: {@code /api/v1/namespaces/ns/serviceaccounts/NAME/token}
   * names NAME, {@code /apis/coordination.k8s.io/v1/namespaces/ns/leases} nothing (the name of a
   * created object is in its body, which RBAC does not see).
   */
  static String nameInUrl(String uri, String namespace, String resource) {
    String[] path = uri.replaceFirst("\\?.*", "").split("/");
    int start = 0;
    if (namespace != null) {
      for (int i = 0; i + 1 < path.length; i++) {
        if (path[i].equals("namespaces") && path[i + 1].equals(namespace)) {
          start = i + 2;
          break;
        }
      }
    }
    for (int i = start; i < path.length; i++) {
      if (path[i].equals(resource)) {
        return i + 1 < path.length ? path[i + 1] : null;
      }
    }
    return null;
  }
}
