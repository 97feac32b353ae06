package io.delayedtask.operator.task.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.opentelemetry.api.trace.SpanContext;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A firing's trace context: the annotation's, or one derived from uid and due time; and a Job's
 * TRACEPARENT.
 */
class TaskTraceTest {
  private static final String GIVEN = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  private static final Instant DUE = Instant.parse("2026-12-05T18:00:00.250Z");

  @AfterEach
  void defaultSampling() {
    TaskTrace.sampleNewTraces(null);
  }

  private static DelayedTask task(String uid, Map<String, String> annotations) {
    DelayedTask task = Tasks.withJob("ns", "t", DUE);
    task.getMetadata().setUid(uid);
    task.getMetadata().setAnnotations(annotations);
    return task;
  }

  @Test
  void aValidAnnotationGivesTheTraceAndIsTheFiringsParent() {
    TaskTrace trace =
        TaskTrace.of(
            task(
                "u1",
                Map.of(
                    TaskTrace.TRACEPARENT_ANNOTATION,
                    GIVEN,
                    TaskTrace.TRACESTATE_ANNOTATION,
                    "vendor=abc,other=x")),
            DUE);

    assertThat(trace.invalidAnnotation()).isEmpty();
    assertThat(trace.parent()).map(SpanContext::getSpanId).contains("00f067aa0ba902b7");
    assertThat(trace.firing().getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(trace.firing().getSpanId()).isNotEqualTo("00f067aa0ba902b7");
    assertThat(trace.firing().isSampled()).isTrue();
    assertThat(trace.firing().getTraceState().get("vendor")).isEqualTo("abc");
  }

  @Test
  void anAttemptIsASpanOfItsOwnInTheTasksTrace() {
    TaskTrace trace =
        TaskTrace.of(
            task(
                "u1",
                Map.of(
                    TaskTrace.TRACEPARENT_ANNOTATION,
                    GIVEN,
                    TaskTrace.TRACESTATE_ANNOTATION,
                    "vendor=abc")),
            DUE);

    Map<String, String> first = TaskTrace.headers(trace.attempt());
    Map<String, String> second = TaskTrace.headers(trace.attempt());

    assertThat(first.get("traceparent"))
        .matches("00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01");
    assertThat(second.get("traceparent")).startsWith("00-4bf92f3577b34da6a3ce929d0e0e4736-");
    assertThat(first.get("traceparent")).isNotEqualTo(second.get("traceparent"));
    assertThat(first).containsEntry("tracestate", "vendor=abc");
  }

  @Test
  void withoutAnAnnotationTheTraceIsDerivedFromUidAndDueTime() {
    TaskTrace once = TaskTrace.of(task("u1", null), DUE);
    TaskTrace again = TaskTrace.of(task("u1", null), DUE); // another attempt, or after a restart

    assertThat(once.firing()).isEqualTo(again.firing());
    assertThat(once.firing().isValid()).isTrue();
    assertThat(once.parent()).isEmpty();
    assertThat(once.invalidAnnotation()).isEmpty();
    assertThat(TaskTrace.of(task("u1", null), DUE.plusMillis(1)).firing().getTraceId())
        .isNotEqualTo(once.firing().getTraceId());
    assertThat(TaskTrace.of(task("u2", null), DUE).firing().getTraceId())
        .isNotEqualTo(once.firing().getTraceId());
    assertThat(TaskTrace.headers(once.attempt())).doesNotContainKey("tracestate");
  }

  @Test
  void anInvalidAnnotationIsIgnoredAndReported() {
    for (String bad :
        List.of(
            "",
            "garbage",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7")) {
      TaskTrace trace =
          TaskTrace.of(task("u1", Map.of(TaskTrace.TRACEPARENT_ANNOTATION, bad)), DUE);

      assertThat(trace.invalidAnnotation()).as(bad).contains(bad);
      assertThat(trace.parent()).as(bad).isEmpty();
      assertThat(trace.firing()).as(bad).isEqualTo(TaskTrace.of(task("u1", null), DUE).firing());
    }
  }

  @Test
  void anInvalidTracestateIsDroppedAndTheTraceparentKept() {
    TaskTrace trace =
        TaskTrace.of(
            task(
                "u1",
                Map.of(
                    TaskTrace.TRACEPARENT_ANNOTATION,
                    GIVEN,
                    TaskTrace.TRACESTATE_ANNOTATION,
                    "not a list entry")),
            DUE);

    assertThat(trace.firing().getTraceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(TaskTrace.headers(trace.attempt())).doesNotContainKey("tracestate");
  }

  @Test
  void aNewTracesSampledFlagIsTheSamplersDecision() {
    TaskTrace.sampleNewTraces(traceId -> false);

    assertThat(TaskTrace.headers(TaskTrace.of(task("u1", null), DUE).attempt()).get("traceparent"))
        .endsWith("-00");
  }

  @Test
  void everyContainerOfTheJobCarriesTheFiringsContext() {
    DelayedTask task =
        task(
            "u1",
            Map.of(
                TaskTrace.TRACEPARENT_ANNOTATION,
                GIVEN,
                TaskTrace.TRACESTATE_ANNOTATION,
                "vendor=abc"));
    var pod = task.getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
    pod.getContainers().add(new Container());
    pod.getContainers().get(1).setName("second");
    pod.getContainers()
        .get(1)
        .setEnv(List.of(new EnvVar("TRACEPARENT", "theirs", null), new EnvVar("KEEP", "1", null)));
    pod.setInitContainers(List.of(new Container()));
    pod.getInitContainers().get(0).setName("init");

    Job job = JobFactory.jobFor(task, DUE, DUE);

    var jobPod = job.getSpec().getTemplate().getSpec();
    String expected =
        "00-4bf92f3577b34da6a3ce929d0e0e4736-"
            + TaskTrace.of(task, DUE).firing().getSpanId()
            + "-01";
    for (Container container :
        Stream.concat(jobPod.getContainers().stream(), jobPod.getInitContainers().stream())
            .toList()) {
      Map<String, List<String>> env =
          container.getEnv().stream()
              .collect(
                  Collectors.groupingBy(
                      EnvVar::getName, Collectors.mapping(EnvVar::getValue, Collectors.toList())));
      assertThat(env)
          .as(container.getName())
          .containsEntry("TRACEPARENT", List.of(expected))
          .containsEntry("TRACESTATE", List.of("vendor=abc"));
    }
    assertThat(jobPod.getContainers().get(1).getEnv()).extracting(EnvVar::getName).contains("KEEP");
    // The task's own template is left as it was.
    assertThat(pod.getContainers().get(0).getEnv()).isNullOrEmpty();
    assertThat(pod.getContainers().get(1).getEnv()).extracting(EnvVar::getValue).contains("theirs");
  }

  @Test
  void withoutAnAnnotationTheJobGetsTheDerivedTraceAndNoTracestate() {
    DelayedTask task = task("u1", null);

    Job job = JobFactory.jobFor(task, DUE, DUE);

    List<EnvVar> env = job.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    assertThat(env).extracting(EnvVar::getName).containsExactly("TRACEPARENT");
    assertThat(env.get(0).getValue())
        .isEqualTo(TaskTrace.headers(TaskTrace.of(task, DUE).firing()).get("traceparent"));
  }
}
