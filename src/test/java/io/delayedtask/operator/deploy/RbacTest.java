package io.delayedtask.operator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.testing.AuditLog;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RbacTest {
  private static final Map<String, String> NAMES =
      Map.of("{lease}", "dto", "{sender}", "delayedtask-sender");

  @Test
  void requestsBecomeGrantsLimitedByNameOnlyWhereEveryRequestNamedTheConfiguredObject() {
    assertThat(
            Rbac.used(
                List.of(
                    request("get", "coordination.k8s.io", "leases", null, "dto"),
                    request("patch", "coordination.k8s.io", "leases", null, "dto"),
                    request("create", "coordination.k8s.io", "leases", null, null),
                    request("create", "", "serviceaccounts", "token", "delayedtask-sender"),
                    request("get", "", "services", null, "orders"),
                    request("get", "", "events", null, "a.1"),
                    request("get", "", "events", null, "b.2"),
                    request("list", "batch", "jobs", null, null),
                    request("watch", "batch", "jobs", null, null)),
                NAMES))
        .containsExactlyInAnyOrder(
            "coordination.k8s.io/leases: create",
            "coordination.k8s.io/leases[{lease}]: get,patch",
            "/serviceaccounts/token[{sender}]: create",
            "/services: get",
            "/events: get",
            "batch/jobs: list,watch");
  }

  @Test
  void theCheckedInRecordFillsItsPlaceholders() {
    assertThat(Rbac.leaderElection("my-lease"))
        .allMatch(line -> !line.contains("{"))
        .anyMatch(line -> line.contains("[my-lease]"));
    assertThat(Rbac.operator("orders-sender"))
        .contains("/serviceaccounts/token[orders-sender]: create");
    assertThat(Rbac.merge(List.of("batch/jobs: get", "batch/jobs: create,get", "/events: patch")))
        .containsExactlyInAnyOrder("batch/jobs: create,get", "/events: patch");
  }

  private static AuditLog.Request request(
      String verb, String group, String resource, String subresource, String name) {
    return new AuditLog.Request(
        Instant.EPOCH, verb, group, resource, subresource, "ns", name, "/", 200, "allow", "");
  }
}
