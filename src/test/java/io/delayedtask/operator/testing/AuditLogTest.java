package io.delayedtask.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {
  private static final String USER = "system:serviceaccount:ops:dto";

  @TempDir Path dir;

  @Test
  void aListOrWatchRestrictedToOneNameByItsFieldSelectorNamesIt() {
    assertThat(
            AuditLog.nameInFieldSelector(
                "/api/v1/secrets?fieldSelector=metadata.name%3Ddelayedtask-signing"
                    + "&resourceVersion=0"))
        .isEqualTo("delayedtask-signing");
    assertThat(
            AuditLog.nameInFieldSelector(
                "/api/v1/namespaces/a/secrets?allowWatchBookmarks=true&fieldSelector="
                    + "metadata.name%3Dsigning&watch=true"))
        .isEqualTo("signing");
    assertThat(AuditLog.nameInFieldSelector("/api/v1/secrets?fieldSelector=metadata.namespace%3Da"))
        .isNull();
    assertThat(AuditLog.nameInFieldSelector("/api/v1/secrets")).isNull();
  }

  @Test
  void eachRequestIsReadOnceWithTheObjectItsUrlNamesAndTheAuthorizersVerdict() throws Exception {
    Path file = dir.resolve("audit.log");
    Files.write(
        file,
        List.of(
            event(
                "a",
                "ResponseComplete",
                "create",
                "/api/v1/namespaces/apps/serviceaccounts/sender/token",
                ref("", "serviceaccounts", "token", "apps", "sender"),
                201,
                "allow",
                "RBAC: allowed by ClusterRoleBinding \\\"dto\\\" of ClusterRole \\\"dto\\\" to ServiceAccount \\\"dto/ops\\\""),
            event(
                "b",
                "ResponseStarted",
                "watch",
                "/apis/batch/v1/jobs?watch=true",
                ref("batch", "jobs", null, null, null),
                200,
                "allow",
                ""),
            event(
                "b",
                "ResponseComplete",
                "watch",
                "/apis/batch/v1/jobs?watch=true",
                ref("batch", "jobs", null, null, null),
                200,
                "allow",
                ""),
            event(
                "c",
                "ResponseComplete",
                "create",
                "/apis/coordination.k8s.io/v1/namespaces/ops/leases",
                ref("coordination.k8s.io", "leases", null, "ops", "dto-lease"),
                201,
                "allow",
                ""),
            event(
                "d",
                "ResponseComplete",
                "get",
                "/api/v1/namespaces/apps/secrets/x",
                ref("", "secrets", null, "apps", "x"),
                403,
                "forbid",
                ""),
            event("e", "ResponseComplete", "get", "/version", null, 200, "allow", ""),
            event("f", "ResponseComplete", "get", "/version", null, 200, "allow", "")
                .replace(USER, "someone-else")));

    List<AuditLog.Request> requests = new AuditLog(file).requests(USER);

    assertThat(requests)
        .extracting(
            r ->
                r.verb()
                    + " "
                    + (r.isResource() ? r.target() : r.uri())
                    + " "
                    + r.name()
                    + " "
                    + r.code()
                    + " "
                    + r.decision())
        .containsExactly(
            "create /serviceaccounts/token sender 201 allow",
            "watch batch/jobs null 200 allow",
            "create coordination.k8s.io/leases null 201 allow", // the name is in the body, which
            // RBAC does not see
            "get /secrets x 403 forbid",
            "get /version null 200 allow");
    assertThat(requests.get(0).reason()).contains("ClusterRoleBinding \"dto\"");
    assertThat(requests.get(1).namespace()).isNull();
    assertThat(new AuditLog(file).count(USER, Instant.EPOCH, Instant.now()))
        .containsEntry("watch jobs", 1L)
        .containsEntry("get secrets 403", 1L)
        .containsEntry("get /version", 1L);
  }

  private static String ref(
      String group, String resource, String subresource, String namespace, String name) {
    return "{\"resource\":\"%s\",\"apiGroup\":\"%s\"%s%s%s}"
        .formatted(
            resource,
            group,
            subresource == null ? "" : ",\"subresource\":\"" + subresource + "\"",
            namespace == null ? "" : ",\"namespace\":\"" + namespace + "\"",
            name == null ? "" : ",\"name\":\"" + name + "\"");
  }

  private static String event(
      String id,
      String stage,
      String verb,
      String uri,
      String ref,
      int code,
      String decision,
      String reason) {
    return ("{\"kind\":\"Event\",\"level\":\"Metadata\",\"auditID\":\"%s\",\"stage\":\"%s\",\"requestURI\":\"%s\","
            + "\"verb\":\"%s\",\"user\":{\"username\":\"%s\"},%s\"responseStatus\":{\"code\":%d},"
            + "\"requestReceivedTimestamp\":\"2026-12-03T18:00:00.000000Z\","
            + "\"annotations\":{\"authorization.k8s.io/decision\":\"%s\",\"authorization.k8s.io/reason\":\"%s\"}}")
        .formatted(
            id,
            stage,
            uri,
            verb,
            USER,
            ref == null ? "" : "\"objectRef\":" + ref + ",",
            code,
            decision,
            reason);
  }
}
