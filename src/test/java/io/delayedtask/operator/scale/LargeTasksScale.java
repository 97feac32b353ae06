package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.CeOverrides;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * Scale run (not a test): 2,000 DelayedTasks at the largest spec, each with a payload of 64 values
 * and a 100 KiB jobTemplate, against the operator at its default memory limit: the image's JVM
 * options ({@code -XX:MaxRAMPercentage=60.0 -XX:+ExitOnOutOfMemoryError}) on a machine of the
 * chart's default limits, 512Mi and one CPU ({@code -XX:MaxRAM}, {@code -XX:ActiveProcessorCount}).
 * Prints, for an operator that follows the tasks as they are created and then for one started
 * afterwards (which lists them all), whether it lived, its heap in use, its live set after a full
 * GC and its peak resident memory; a share of the tasks fall due during the creation, so their Jobs
 * are created from the whole spec. With {@code -Dbaseline.jar=...} the same restart for another
 * build, side by side.
 *
 * <p>The payload values are 4,000 characters, not the CRD's 4,096: the Job carries the payload as
 * annotations, which the API server limits to 256 KiB together with their keys, so 64 values of
 * 4,096 characters make a Job task that its dry run finds Invalid.
 *
 * <p>{@code -Dshape=largest}: every task as large as the API server takes, including what the first
 * run's tasks lacked: 256 KiB of annotations (the API server's limit on their keys and values
 * together), most of it a {@code kubectl.kubernetes.io/last-applied-configuration} copy of the
 * payload. Even tasks are sink tasks with every field at the CRD's maximum (payload 64 values of
 * 4,096, data 64 KiB, {@code sink.caCerts} and {@code delivery.deadLetterSink.caCerts} 64 KiB each
 * of valid PEM, distinct per task, 32 {@code ceOverrides} of 256 characters) delivered over https
 * to a receiver those caCerts trust; odd ones are Job tasks, half with the largest jobTemplate the
 * operator takes (128 KiB as JSON; they fire), half with one that fills what the API server stores
 * (the operator finds them Invalid, yet its informer lists and caches them): before the run, a
 * probe creates ever larger tasks until one is refused (etcd's {@code --max-request-bytes}, 1.5 MiB
 * by default, or the API server's 3 MiB request limit, whichever is lower), and those Job tasks are
 * 32 KiB under it, for the status and managedFields the operator's writes add. 2,000 of these are
 * about 2 GiB, past etcd's default 2 GiB quota: start the run with {@code ETCD_QUOTA_BACKEND_BYTES}
 * (etcd reads its flags from the environment it inherits).
 *
 * <pre>
 * mvn -o package -DskipTests
 * MAVEN_OPTS=-Xmx2g mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.LargeTasksScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtasks=2000] [-Dfiring=100] [-Dbaseline.jar=...]
 * ETCD_QUOTA_BACKEND_BYTES=17179869184 MAVEN_OPTS=-Xmx3g mvn -o exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.delayedtask.operator.scale.LargeTasksScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dshape=largest
 * </pre>
 */
public final class LargeTasksScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  /**
   * What the image runs with (-Dheap.percent to try another share), in a container of the chart's
   * default limits: 512Mi and one CPU, which makes the JVM choose its serial collector.
   */
  private static final List<String> DEFAULT_LIMIT_JVM =
      jvm(System.getProperty("heap.percent", "60.0"));

  private static final int PAYLOAD_KEYS = 64;
  private static final int PAYLOAD_VALUE_CHARS = 4000;
  private static final int TEMPLATE_FILLER_CHARS = 100 * 1024;

  /** How long each phase may wait for its entries and firings (-DwaitSeconds). */
  private static final long WAIT_SECONDS = Long.getLong("waitSeconds", 600);

  private LargeTasksScale() {}

  public static void main(String[] args) throws Exception {
    int count = Integer.getInteger("tasks", 2000);
    int firing = Integer.getInteger("firing", 100);
    boolean largest = "largest".equals(System.getProperty("shape", "jobs"));
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start("real"));
        Receiver receiver = Receiver.startHttps()) {
      int pending = count - firing;
      IntFunction<DelayedTask> tasks;
      IntPredicate valid = i -> true;
      String shape;
      if (largest) {
        Largest sizes = Largest.probe(lab, receiver);
        tasks = i -> sizes.task(i, due(i, pending));
        valid = Largest::valid;
        shape = sizes.describe();
      } else {
        Map<String, String> payload = payload(PAYLOAD_VALUE_CHARS);
        JobTemplateSpec template = template(TEMPLATE_FILLER_CHARS);
        tasks =
            i ->
                Tasks.task(
                    NS,
                    "large-" + i,
                    s -> {
                      due(i, pending).accept(s);
                      s.setPayload(payload);
                      s.setJobTemplate(template);
                    });
        shape =
            "Job tasks of "
                + (PAYLOAD_KEYS * PAYLOAD_VALUE_CHARS + TEMPLATE_FILLER_CHARS) / 1024
                + " KiB";
      }
      // What the operator schedules (the Invalid wait for nothing) and fires.
      int entries = (int) IntStream.range(0, pending).filter(valid).count();
      int toFire = (int) IntStream.range(pending, count).filter(valid).count();
      OperatorScaleLab.banner(
          "LargeTasksScale, "
              + count
              + " "
              + shape
              + ", "
              + firing
              + " of them due during the run; JVM "
              + DEFAULT_LIMIT_JVM
              + "; ETCD_QUOTA_BACKEND_BYTES="
              + System.getenv().getOrDefault("ETCD_QUOTA_BACKEND_BYTES", "(etcd's default, 2 GiB)"),
          lab.target);
      // A Lease of 30 s rather than 4: on this shared 2-core machine an operator held to one CPU
      // lost its
      // Lease while 2,000 tasks of 1.5 MiB were created (and exits then); this run measures memory.
      Map<String, String> sinkEnv =
          Map.of(
              SinkConfig.ALLOWED_URIS,
              receiver.base(),
              OperatorConfig.LEASE_DURATION_SECONDS,
              System.getProperty("leaseSeconds", "30"));
      RedisClient redis = RedisClient.create(lab.redis.uri());
      try (StatefulRedisConnection<String, String> connection = redis.connect()) {
        String dueKey = new io.delayedtask.operator.schedule.ScheduleKeys("delayedtask", 1).due(0);
        int port = Ports.freePort();
        OperatorProcess following =
            lab.startOperator(
                "large-follow", port, OperatorProcess.jar(), sinkEnv, DEFAULT_LIMIT_JVM);
        lab.awaitReady(following, port);
        long createMs = lab.createAll(count, OperatorScaleLab.createThreads(), tasks);
        System.out.printf("created %,d tasks in %,d ms%n", count, createMs);
        long waitStart = System.nanoTime();
        while (connection.sync().zcard(dueKey) < entries || fired(lab, pending, count) < toFire) {
          if (!following.isAlive()) {
            System.out.println("the operator died; its log ends:\n" + tail(following.log()));
            break;
          }
          if (System.nanoTime() - waitStart > WAIT_SECONDS * 1_000_000_000L) {
            System.out.printf(
                "WARNING: after "
                    + WAIT_SECONDS
                    + " s: %,d entries, %,d of %,d due tasks fired; going on%n",
                connection.sync().zcard(dueKey),
                fired(lab, pending, count),
                toFire);
            break;
          }
          Thread.sleep(5_000); // a measuring loop, not a test: each check reads the due tasks whole
        }
        report(
            "operator following the creation",
            lab,
            following,
            port,
            connection.sync().zcard(dueKey),
            fired(lab, pending, count),
            receiver);
        following.kill();

        measureRestart(
            lab,
            "restarted operator (lists every task)",
            OperatorProcess.jar(),
            DEFAULT_LIMIT_JVM,
            sinkEnv,
            entries,
            pending,
            count,
            connection,
            dueKey,
            receiver);
        // -Dalso.heap.percent=60: the same restart with another heap share, to compare resident
        // peaks.
        String other = System.getProperty("also.heap.percent");
        if (other != null) {
          measureRestart(
              lab,
              "restarted operator, heap " + other + "%",
              OperatorProcess.jar(),
              jvm(other),
              sinkEnv,
              entries,
              pending,
              count,
              connection,
              dueKey,
              receiver);
        }
        String baseline = System.getProperty("baseline.jar");
        if (baseline != null && Files.exists(Path.of(baseline))) {
          measureRestart(
              lab,
              "baseline " + baseline + " restarted",
              Path.of(baseline),
              DEFAULT_LIMIT_JVM,
              sinkEnv,
              entries,
              pending,
              count,
              connection,
              dueKey,
              receiver);
        }
      } finally {
        redis.shutdown();
      }
    }
    System.exit(0);
  }

  /**
   * The last {@code count - pending} fall due 20 s after they are created: during the creation of
   * the rest, or just after.
   */
  private static Consumer<DelayedTaskSpec> due(int i, int pending) {
    return s -> {
      if (i >= pending) {
        s.setDelay("20s");
      } else {
        s.setRunAt("2099-01-01T00:00:00Z");
      }
    };
  }

  private static List<String> jvm(String heapPercent) {
    return List.of(
        "-XX:MaxRAM=512m",
        "-XX:ActiveProcessorCount=1",
        "-XX:MaxRAMPercentage=" + heapPercent,
        "-XX:+ExitOnOutOfMemoryError");
  }

  private static void measureRestart(
      OperatorScaleLab lab,
      String what,
      Path jar,
      List<String> jvm,
      Map<String, String> env,
      int entries,
      int pending,
      int count,
      StatefulRedisConnection<String, String> connection,
      String dueKey,
      Receiver receiver)
      throws Exception {
    connection.sync().flushall(); // the restart rebuilds the schedule from the tasks it lists
    int port = Ports.freePort();
    long start = System.nanoTime();
    try (OperatorProcess restarted = lab.startOperator("large-restart", port, jar, env, jvm)) {
      while (restarted.isAlive()
          && (!lab.ready(port) || connection.sync().zcard(dueKey) < entries)) {
        if (System.nanoTime() - start > WAIT_SECONDS * 1_000_000_000L) {
          System.out.println(
              "WARNING: not ready with a full schedule after " + WAIT_SECONDS + " s");
          break;
        }
        Thread.sleep(500); // a measuring loop, not a test
      }
      if (restarted.isAlive()) {
        System.out.printf(
            "%s: ready with all %,d entries after %,d ms%n",
            what, entries, (System.nanoTime() - start) / 1_000_000);
      }
      report(
          what,
          lab,
          restarted,
          port,
          connection.sync().zcard(dueKey),
          fired(lab, pending, count),
          receiver);
    }
  }

  private static void report(
      String what,
      OperatorScaleLab lab,
      OperatorProcess operator,
      int port,
      long entries,
      int fired,
      Receiver receiver)
      throws Exception {
    String peak = residentPeakMb(operator.pid());
    long heapMb;
    try {
      heapMb = operator.isAlive() ? lab.heapUsedBytes(port) / (1024 * 1024) : -1;
    } catch (java.io.IOException e) {
      heapMb = -1; // it died between the two calls
    }
    if (heapMb < 0) {
      System.out.printf(
          "%s: DIED (exit %s), peak resident %s MB, %,d entries, %,d due tasks fired; log ends:%n%s%n",
          what,
          operator.waitForExit(java.time.Duration.ofSeconds(5)),
          peak,
          entries,
          fired,
          tail(operator.log()));
      return;
    }
    System.out.printf(
        "%s: alive; heap in use %,d MB, live after a full GC %s, peak resident %s MB (limit 512), "
            + "%,d entries, %,d due tasks fired (Job tasks Running, sink tasks Succeeded; %,d deliveries received)%n",
        what,
        heapMb,
        LiveHeap.megabytes(operator.pid()),
        peak,
        entries,
        fired,
        receiver.requests().size());
  }

  /**
   * The due tasks that fired: a Job task's status says Running (its Job created; no Job controller
   * runs), a sink task's Succeeded (delivered). Read one by one (each is large).
   */
  private static int fired(OperatorScaleLab lab, int from, int to) {
    int fired = 0;
    for (int i = from; i < to; i++) {
      DelayedTask task =
          lab.client().resources(DelayedTask.class).inNamespace(NS).withName("large-" + i).get();
      Phase phase = task == null || task.getStatus() == null ? null : task.getStatus().getPhase();
      if (phase == Phase.Running || phase == Phase.Succeeded) {
        fired++;
      }
    }
    return fired;
  }

  private static Map<String, String> payload(int valueChars) {
    Map<String, String> payload = new TreeMap<>();
    for (int i = 0; i < PAYLOAD_KEYS; i++) {
      payload.put("k" + i, Character.toString('a' + i % 26).repeat(valueChars));
    }
    return payload;
  }

  private static JobTemplateSpec template(int fillerChars) {
    JobTemplateSpec template = Tasks.busyboxJob();
    template
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .setEnv(new ArrayList<>(List.of(new EnvVar("FILLER", "f".repeat(fillerChars), null))));
    return template;
  }

  /**
   * {@code -Dshape=largest}: sink tasks with every field at its maximum and Job tasks whose
   * jobTemplate fills what the API server stores, both with 256 KiB of annotations.
   */
  private static final class Largest {
    /**
     * The API server's limit on an object's annotations, keys and values together (apimachinery).
     */
    private static final int ANNOTATION_LIMIT = 256 * 1024;

    private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
    private static final int FIELD_MAX = 64 * 1024;

    /** What the operator's writes add to a stored task: finalizer, status, their managedFields. */
    private static final int WRITE_MARGIN = 32 * 1024;

    private static final int PROBE_FROM = 3 * 1024 * 1024;
    private static final int PROBE_STEP = 8 * 1024;

    private final Receiver receiver;
    private final Map<String, String> sinkPayload = payload(4096);
    private final Map<String, String> jobPayload = payload(PAYLOAD_VALUE_CHARS);
    private final String data = "\"" + "x".repeat(FIELD_MAX - 2) + "\"";
    private final CeOverrides ceOverrides;
    private final JobTemplateSpec template;

    /**
     * The largest jobTemplate the operator takes ({@link DelayedTaskSpec#JOB_TEMPLATE_MAX_BYTES} as
     * JSON).
     */
    private final JobTemplateSpec validTemplate;

    private final int largestStored;

    private Largest(Receiver receiver, int templateFiller, int largestStored) {
      this.receiver = receiver;
      Map<String, String> extensions = new TreeMap<>();
      for (int i = 0; i < 32; i++) {
        extensions.put("e" + i, "v".repeat(256));
      }
      this.ceOverrides = new CeOverrides(extensions);
      this.template = template(templateFiller);
      int base = Serialization.asJson(template(0)).length();
      this.validTemplate = template(DelayedTaskSpec.JOB_TEMPLATE_MAX_BYTES - base - 256);
      this.largestStored = largestStored;
    }

    /**
     * Finds the largest Job task the API server stores (creating ever larger ones, halving the
     * step, and deleting them) and returns the shapes with Job tasks {@link #WRITE_MARGIN} under
     * it.
     */
    static Largest probe(OperatorScaleLab lab, Receiver receiver) {
      int accepted = 0;
      int refused = PROBE_FROM;
      String why = "none refused";
      int n = 0;
      // Without the client's retries: a refusal (etcd's 500) would otherwise be sent 10 more times.
      KubernetesClient once =
          new KubernetesClientBuilder()
              .withConfig(
                  new ConfigBuilder(lab.client().getConfiguration())
                      .withRequestRetryBackoffLimit(0)
                      .build())
              .build();
      while (refused - accepted > PROBE_STEP) {
        int filler = (accepted + refused) / 2;
        Largest shape = new Largest(receiver, filler, 0);
        DelayedTask probe =
            shape.jobTask("probe-" + n++, s -> s.setRunAt("2099-01-01T00:00:00Z"), shape.template);
        try {
          once.resource(probe).create();
          accepted = filler;
          once.resource(probe).delete();
        } catch (KubernetesClientException e) {
          refused = filler;
          why = e.getCode() + " " + e.getMessage().lines().findFirst().orElse("");
        }
      }
      once.close();
      Largest sizes = new Largest(receiver, accepted, 0);
      int stored =
          json(sizes.jobTask("probe", s -> s.setRunAt("2099-01-01T00:00:00Z"), sizes.template));
      System.out.printf(
          "probe: the API server stores a Job task of %,d bytes of JSON (filler %,d), refuses one %,d "
              + "bytes larger: %s%n",
          stored, accepted, refused - accepted, why.length() > 300 ? why.substring(0, 300) : why);
      return new Largest(receiver, Math.max(0, accepted - WRITE_MARGIN), stored);
    }

    String describe() {
      return String.format(
          "largest tasks (half sink tasks of %,d bytes of JSON; a quarter Job tasks with the largest "
              + "jobTemplate the operator takes, %,d bytes; a quarter with the largest the API server stores, %,d bytes, "
              + "which the operator finds Invalid (its jobTemplate over %,d bytes) and caches all the same; the largest "
              + "task the API server stored: %,d)",
          json(task(0, s -> {})),
          json(task(1, s -> {})),
          json(task(3, s -> {})),
          DelayedTaskSpec.JOB_TEMPLATE_MAX_BYTES,
          largestStored);
    }

    /**
     * Even: a sink task; 1 of 4: a Job task the operator fires; 3 of 4: a Job task the API server
     * stores and the operator refuses.
     */
    DelayedTask task(int i, Consumer<DelayedTaskSpec> due) {
      if (i % 2 == 0) {
        return sinkTask("large-" + i, due);
      }
      return jobTask("large-" + i, due, i % 4 == 1 ? validTemplate : template);
    }

    static boolean valid(int i) {
      return i % 4 != 3;
    }

    private DelayedTask sinkTask(String name, Consumer<DelayedTaskSpec> due) {
      DelayedTask task =
          Tasks.task(
              NS,
              name,
              s -> {
                due.accept(s);
                s.setPayload(sinkPayload);
                s.setData(data);
                s.setCeOverrides(ceOverrides);
                s.setSink(destination("/large", name + " sink"));
                DeliverySpec delivery = new DeliverySpec();
                delivery.setDeadLetterSink(destination("/dead", name + " dead letters"));
                s.setDelivery(delivery);
              });
      task.getMetadata().setAnnotations(annotations(name));
      return task;
    }

    private DelayedTask jobTask(
        String name, Consumer<DelayedTaskSpec> due, JobTemplateSpec jobTemplate) {
      DelayedTask task =
          Tasks.task(
              NS,
              name,
              s -> {
                due.accept(s);
                s.setPayload(jobPayload);
                s.setJobTemplate(jobTemplate);
              });
      task.getMetadata().setAnnotations(annotations(name));
      return task;
    }

    private Destination destination(String path, String label) {
      Destination destination = new Destination();
      destination.setUri(receiver.base() + path);
      destination.setCaCerts(caCerts(label));
      return destination;
    }

    /**
     * {@link #FIELD_MAX} characters of PEM: the receiver's certificate as often as it fits, after
     * explanatory text (RFC 7468) naming the task, so that every task's caCerts differ.
     */
    private String caCerts(String label) {
      String pem = receiver.caCertsPem().strip() + "\n";
      int copies = (FIELD_MAX - label.length() - 2) / pem.length();
      int text = FIELD_MAX - copies * pem.length() - 1;
      return (label + " " + ".".repeat(text)).substring(0, text) + "\n" + pem.repeat(copies);
    }

    /**
     * kubectl's copy of the task (its payload, as far as it fits) and one small annotation: the
     * limit exactly.
     */
    private static Map<String, String> annotations(String name) {
      Map<String, String> annotations = new TreeMap<>();
      annotations.put("team", "orders");
      String copy =
          "{\"apiVersion\":\"delayedtask.io/v1alpha1\",\"kind\":\"DelayedTask\",\"metadata\":{\"name\":\""
              + name
              + "\"},\"spec\":{\"payload\":{\"k0\":\"";
      int room = ANNOTATION_LIMIT - "team".length() - "orders".length() - LAST_APPLIED.length();
      annotations.put(LAST_APPLIED, copy + "a".repeat(room - copy.length()));
      return annotations;
    }

    private static int json(DelayedTask task) {
      return Serialization.asJson(task).length();
    }
  }

  /** Peak resident set (VmHWM) of a live process, from /proc. */
  private static String residentPeakMb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.toString(Long.parseLong(line.replaceAll("\\D", "")) / 1024);
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      return "?";
    }
    return "?";
  }

  private static String tail(String log) {
    String[] lines = log.split("\n");
    return String.join(
        "\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 15), lines.length));
  }
}
