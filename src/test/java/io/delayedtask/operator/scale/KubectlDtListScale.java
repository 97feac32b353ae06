package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.BuildIdentity;
import io.delayedtask.operator.testing.KubectlDtProgram;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Scale run (not a test), benchmark (e) of issue 33: {@code kubectl dt list} over 10,000 tasks on a
 * real API server of its own. The tasks get the statuses the operator would write (Scheduled, due
 * over the next day; every fifth in the queue {@code emails}, held with {@code Queued=True
 * QueuePaused}), through the status subresource: no operator runs. The plugin is built and
 * installed as {@code cli/KubectlDtIT} installs it (one file on a PATH of its own) and run as a
 * user runs it; each form is run {@code -Druns} times, timing the first line of its standard output
 * and its end. {@code kubectl get delayedtasks} runs beside it for comparison.
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.KubectlDtListScale [-Dtasks=10000] [-Druns=5]
 * </pre>
 */
public final class KubectlDtListScale {
  private static final DateTimeFormatter STATUS_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private KubectlDtListScale() {}

  public static void main(String[] args) throws Exception {
    int tasks = Integer.getInteger("tasks", 10_000);
    int runs = Integer.getInteger("runs", 5);
    Path built = KubectlDtProgram.build();
    try (RealKubernetes kube = RealKubernetes.startDedicated()) {
      Path bin = Files.createTempDirectory("kubectl-dt-bin");
      KubectlDtProgram dt =
          KubectlDtProgram.install(bin, kube.kubeconfig(), kube.binaries().binary("kubectl"));
      System.out.printf(
          "%n===== KubectlDtListScale, %,d tasks, %d runs of each form; real API server %s; "
              + "plugin %s (%,d bytes); harness %s; %s =====%n",
          tasks,
          runs,
          kube.binaries().version(),
          built,
          Files.size(built),
          BuildIdentity.workingTree(),
          ProcessMeter.loadAverage());
      String ns = kube.createNamespace("dt-list");
      long createMillis = createAll(kube.client(), ns, tasks);
      System.out.printf(
          "created %,d tasks with their statuses in %,d ms (8 threads, 2 requests each)%n",
          tasks, createMillis);
      Map<String, List<String>> forms = new java.util.LinkedHashMap<>();
      forms.put("kubectl dt list", List.of("list", "-n", ns));
      forms.put("kubectl dt list -o wide", List.of("list", "-n", ns, "-o", "wide"));
      forms.put("kubectl dt list -o json", List.of("list", "-n", ns, "-o", "json"));
      forms.put("kubectl dt list --due-within 1h", List.of("list", "-n", ns, "--due-within", "1h"));
      forms.put("kubectl get delayedtasks (for comparison)", List.of());
      System.out.printf(
          "%n| command | runs | lines (last run) | first line, ms: median (min-max) | end, ms: median (min-max) |%n"
              + "|---|--:|--:|---|---|%n");
      for (Map.Entry<String, List<String>> form : forms.entrySet()) {
        List<Long> first = new ArrayList<>();
        List<Long> end = new ArrayList<>();
        int lines = 0;
        for (int run = 0; run < runs; run++) {
          KubectlDtProgram.Result result =
              form.getValue().isEmpty()
                  ? KubectlDtProgram.run(
                      new ProcessBuilder(
                          kube.binaries().binary("kubectl").toString(),
                          "get",
                          "delayedtasks",
                          "-n",
                          ns,
                          "--kubeconfig=" + kube.kubeconfig()),
                      2)
                  : dt.run(form.getValue().toArray(String[]::new));
          if (!result.ok()) {
            throw new IllegalStateException(form.getKey() + " failed: " + result.output());
          }
          first.add(result.firstLineMillis());
          end.add(result.endMillis());
          lines = result.lines().size();
        }
        System.out.printf(
            "| `%s` | %d | %,d | %s | %s |%n",
            form.getKey(), runs, lines, summary(first), summary(end));
      }
      System.out.printf("%nfinished; %s%n", ProcessMeter.loadAverage());
    }
    System.exit(0);
  }

  private static String summary(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    return String.format(
        "%,d (%,d-%,d)",
        sorted.get(sorted.size() / 2), sorted.get(0), sorted.get(sorted.size() - 1));
  }

  /** Creates the tasks and writes each one's status, 8 threads; returns ms taken. */
  private static long createAll(KubernetesClient client, String ns, int count) throws Exception {
    Instant base = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> parts = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int firstIndex = t;
        parts.add(
            pool.submit(
                () -> {
                  for (int i = firstIndex; i < count; i += 8) {
                    create(
                        client,
                        ns,
                        i,
                        base.plus(Duration.ofSeconds(60 + (long) i * 86_400 / count)));
                  }
                  return null;
                }));
      }
      for (Future<?> part : parts) {
        part.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static void create(KubernetesClient client, String ns, int i, Instant due) {
    boolean queued = i % 5 == 0;
    DelayedTask task =
        Tasks.task(
            ns,
            "task-" + i,
            s -> {
              s.setRunAt(Tasks.rfc3339(due));
              s.setPayload(Map.of("orderId", "order-" + i, "reason", "payment not received"));
              if (queued) {
                s.setQueue("emails");
              }
            });
    DelayedTask created = client.resource(task).create();
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setObservedGeneration(created.getMetadata().getGeneration());
    status.setPhase(Phase.Scheduled);
    status.setDueTime(STATUS_TIME.format(due));
    String at = Tasks.rfc3339(Instant.now().truncatedTo(ChronoUnit.SECONDS));
    status
        .getConditions()
        .add(
            new Condition(
                "Ready",
                "True",
                "Scheduled",
                "scheduled for " + status.getDueTime(),
                at,
                created.getMetadata().getGeneration()));
    if (queued) {
      status
          .getConditions()
          .add(
              new Condition(
                  "Queued",
                  "True",
                  "QueuePaused",
                  "waiting: DelayedTaskQueue emails is paused",
                  at,
                  created.getMetadata().getGeneration()));
    }
    created.setStatus(status);
    client.resource(created).updateStatus();
  }
}
