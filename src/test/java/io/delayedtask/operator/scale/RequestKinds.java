package io.delayedtask.operator.scale;

import java.util.Arrays;
import java.util.Map;

/**
 * Names a request the way the API server's audit log does, "verb resource[/subresource]" (get,
 * list, watch, create, update, patch, delete), so the mock's HTTP log and the real server's audit
 * log print the same rows, and prints tables of them per task.
 */
final class RequestKinds {
  private RequestKinds() {}

  /**
   * From an HTTP method and path, e.g. PUT .../delayedtasks/t-1/status is "update
   * delayedtasks/status".
   */
  static String ofHttp(String method, String pathAndQuery) {
    int q = pathAndQuery.indexOf('?');
    String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
    boolean watch = q >= 0 && pathAndQuery.substring(q).contains("watch=true");
    String[] parts = path.replaceFirst("^/", "").split("/");
    // /api/v1/... or /apis/<group>/<version>/...
    int from = parts.length > 0 && parts[0].equals("api") ? 2 : 3;
    String[] rest =
        from <= parts.length ? Arrays.copyOfRange(parts, from, parts.length) : new String[0];
    if (rest.length >= 3 && rest[0].equals("namespaces")) {
      rest = Arrays.copyOfRange(rest, 2, rest.length);
    }
    if (rest.length == 0) {
      return method.toLowerCase() + " " + path;
    }
    String resource = rest[0] + (rest.length >= 3 ? "/" + rest[2] : "");
    boolean named = rest.length >= 2;
    String verb =
        switch (method) {
          case "GET" -> watch ? "watch" : named ? "get" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> named ? "delete" : "deletecollection";
          default -> method.toLowerCase();
        };
    return verb + " " + resource;
  }

  /**
   * A table: each kind, its count and its count per task; then totals with and without Lease
   * traffic.
   */
  static void print(String title, Map<String, Long> counts, int tasks) {
    System.out.printf("%s (operator's requests, %,d tasks):%n", title, tasks);
    System.out.printf("  %-42s %9s %9s%n", "verb resource", "requests", "per task");
    counts.forEach(
        (kind, n) -> System.out.printf("  %-42s %9d %9.2f%n", kind, n, (double) n / tasks));
    long all = counts.values().stream().mapToLong(Long::longValue).sum();
    long leases = all - withoutLeases(counts);
    long gets =
        counts.entrySet().stream()
            .filter(e -> e.getKey().startsWith("get ") && !e.getKey().contains("leases"))
            .mapToLong(Map.Entry::getValue)
            .sum();
    System.out.printf("  %-42s %9d %9.2f%n", "all", all, (double) all / tasks);
    System.out.printf(
        "  %-42s %9d %9.2f%n",
        "all but leases (leader election)", all - leases, (double) (all - leases) / tasks);
    System.out.printf("  %-42s %9d %9.2f%n", "GETs but leases", gets, (double) gets / tasks);
    System.out.printf(
        "  %-42s %9d %9.2f%n",
        "writes but leases", writes(counts), (double) writes(counts) / tasks);
  }

  /** Every request but the leader election's (Lease reads and renewals). */
  static long withoutLeases(Map<String, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum() - sum(counts, "leases");
  }

  /** create, update, patch and delete requests, Lease renewals excluded. */
  static long writes(Map<String, Long> counts) {
    return counts.entrySet().stream()
        .filter(
            e ->
                e.getKey().matches("(create|update|patch|delete|deletecollection) .*")
                    && !e.getKey().contains("leases"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  private static long sum(Map<String, Long> counts, String fragment) {
    return counts.entrySet().stream()
        .filter(e -> e.getKey().contains(fragment))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}
