package io.delayedtask.operator.sandbox;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.ControlPlaneBinaries;
import io.delayedtask.operator.testing.Kubeconfig;
import io.delayedtask.operator.testing.KwokCluster;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * The dev sandbox: the real operator, unchanged, against a Kubernetes API and an embedded Redis, on
 * a laptop with JDK 17 and Maven. The Kubernetes API is the real control plane when its binaries
 * are there (kube-apiserver + etcd, kube-controller-manager, and with kube-scheduler + kwok Jobs
 * that really run on a fake Node); otherwise the fabric8 mock API server, and the first lines say
 * which.
 *
 * <p>Run with {@code mvn -B -q -Psandbox test-compile exec:java} (see the README); {@code
 * -Dsandbox.controlPlane=mock} forces the mock. It writes {@code target/sandbox/kubeconfig},
 * applies the examples of {@code k8s/examples/}, prints every task's phase changes with the fire
 * lag, and stops everything cleanly on Ctrl-C.
 */
public final class DevSandbox {
  private static final PrintStream OUT = System.out;
  private static final Duration MOCK_JOB_RUNTIME = Duration.ofSeconds(3);

  /** Which Kubernetes API the sandbox runs on. */
  enum ControlPlane {
    /** The real one when its binaries are there, else the mock. */
    AUTO,
    REAL,
    MOCK;

    static ControlPlane parse(String value) {
      try {
        return valueOf(value.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "sandbox.controlPlane '" + value + "': use auto, real or mock");
      }
    }
  }

  private final ControlPlane requested;
  private final Deque<AutoCloseable> running = new ArrayDeque<>();
  private KubernetesClient client;
  private Path kubeconfig;
  private RealKubernetes kube;
  private boolean jobsRunOnKwok;

  DevSandbox(ControlPlane requested) {
    this.requested = requested;
  }

  public static void main(String[] args) throws Exception {
    // The mock API server logs every request through java.util.logging; the sandbox has its own
    // output.
    java.util.logging.LogManager.getLogManager().reset();
    DevSandbox sandbox =
        new DevSandbox(ControlPlane.parse(System.getProperty("sandbox.controlPlane", "auto")));
    Runtime.getRuntime().addShutdownHook(new Thread(sandbox::stop, "sandbox-stop"));
    sandbox.start(Path.of("").toAbsolutePath());
    new CountDownLatch(1).await();
  }

  void start(Path project) throws IOException {
    Path work = Files.createDirectories(project.resolve("target/sandbox"));

    // 1. The Kubernetes API, and a kubeconfig for kubectl: the real control plane when it is built.
    Optional<ControlPlaneBinaries> binaries =
        requested == ControlPlane.MOCK ? Optional.empty() : ControlPlaneBinaries.find();
    if (requested == ControlPlane.REAL && binaries.isEmpty()) {
      throw new IllegalStateException(
          "sandbox.controlPlane=real, but there are no kube-apiserver/etcd/kubectl under "
              + "${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/: run tools/build-control-plane.sh");
    }
    String apiUrl =
        binaries.isPresent()
            ? startRealControlPlane(binaries.get(), project, work)
            : startMock(project, work);

    // 2. An embedded Redis: the binary embedded-redis ships, on a free port, no persistence.
    RedisProcess redis = RedisProcess.start();
    running.push(redis);

    // 3. A small HTTP receiver on loopback for the sink examples, behind a Service "orders" that
    //    names it (ExternalName localhost, its port): the path /orders/remind answers 503 once.
    Receiver receiver =
        Receiver.start()
            .answer("/orders/remind", Receiver.Answer.status(503), Receiver.Answer.status(200))
            .onRequest(
                (request, answer) ->
                    OUT.printf(
                        "%s  receiver: %s %s  ce-id %s  attempt %s  body %s  -> %d%n",
                        PhaseReporter.CLOCK.format(request.at()),
                        request.method(),
                        request.path(),
                        request.header("ce-id"),
                        request.header("ce-delayedtaskattempt"),
                        request.body(),
                        answer.status()));
    running.push(receiver);
    client
        .services()
        .inNamespace("default")
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName("orders")
                .endMetadata()
                .withNewSpec()
                .withType("ExternalName")
                .withExternalName("localhost")
                .addNewPort()
                .withName("http")
                .withPort(receiver.port())
                .endPort()
                .endSpec()
                .build())
        .createOr(s -> s.update());

    // 4. The operator, configured the way the process reads its environment; allowed: the
    // receiver's
    //    origin, and the URL the ExternalName "orders" yields (localhost, the receiver's port): a
    //    sink.ref reaches loopback only through an entry naming that loopback host.
    int httpPort = freePortPreferring(Integer.getInteger("sandbox.httpPort", 8080));
    //    On the real API server the shipped admission policy is installed (step 1), and the
    // operator
    //    requires it as in production; the mock has no ValidatingAdmissionPolicy, so there the
    // check is off.
    OperatorConfig config =
        OperatorConfig.fromEnv(
            Map.of(
                OperatorConfig.REDIS_URI,
                redis.uri(),
                OperatorConfig.HTTP_PORT,
                Integer.toString(httpPort),
                OperatorConfig.LEASE_NAMESPACE,
                "default",
                OperatorConfig.IDENTITY,
                "sandbox",
                OperatorConfig.RESYNC_SECONDS,
                "60",
                SinkConfig.ALLOWED_URIS,
                receiver.base() + ",http://localhost:" + receiver.port(),
                OperatorConfig.ADMISSION_POLICY,
                kube != null
                    ? String.join(",", OperatorConfig.DEFAULT_ADMISSION_POLICY_BINDINGS)
                    : OperatorConfig.NO_ADMISSION_POLICY));
    running.push(DelayedTaskOperator.start(config, client));

    // 5. Watch every task and say what happens to it.
    SharedIndexInformer<DelayedTask> informer =
        client.resources(DelayedTask.class).inAnyNamespace().inform(new PhaseReporter(OUT));
    running.push(informer::close);

    printUsage(project, apiUrl, redis, httpPort);
    applyExamples(project.resolve("k8s/examples"));
  }

  /**
   * kube-apiserver + etcd of its own, kube-controller-manager, and when they are built
   * kube-scheduler and kwok, so Jobs run on a fake Node and the real Job controller finishes them.
   */
  private String startRealControlPlane(ControlPlaneBinaries binaries, Path project, Path work)
      throws IOException {
    Optional<String> noKwok = KwokCluster.missing(binaries);
    jobsRunOnKwok = noKwok.isEmpty();
    OUT.println(
        "delayed-task-operator sandbox on the REAL Kubernetes control plane "
            + binaries.version()
            + " ("
            + binaries.dir()
            + "):");
    OUT.println(
        jobsRunOnKwok
            ? "  kube-apiserver + etcd + kube-controller-manager + kube-scheduler + kwok: Jobs run on a fake Node"
            : "  kube-apiserver + etcd"
                + (binaries.has("kube-controller-manager") ? " + kube-controller-manager" : "")
                + "; Jobs cannot run ("
                + noKwok.get()
                + "), so the sandbox marks them Complete itself");
    OUT.println("  starting it takes a few seconds...");
    kube = RealKubernetes.startDedicated();
    running.push(kube);
    client = kube.client();
    if (jobsRunOnKwok) {
      running.push(KwokCluster.start(kube));
    } else {
      if (binaries.has("kube-controller-manager")) {
        kube.controllerManager(); // garbage collection: a deleted task takes its Job with it
      }
      running.push(new JobCompleter(client, MOCK_JOB_RUNTIME));
    }
    kubeconfig = work.resolve("kubeconfig");
    Files.writeString(kubeconfig, kube.kubeconfigYaml());
    // The admission policy the plain manifests ship: without it the operator creates no Job (fail
    // closed).
    RealKubernetes.Kubectl.Result policy =
        kube.kubectl("apply", "-f", project.resolve("k8s/15-admission-policy.yaml").toString());
    if (!policy.ok()) {
      throw new IllegalStateException(
          "the sandbox could not install k8s/15-admission-policy.yaml: " + policy.output());
    }
    return client.getMasterUrl().toString().replaceAll("/$", "");
  }

  /** The fabric8 mock API server (CRUD mode) and a stand-in for the Job controller. */
  private String startMock(Path project, Path work) {
    OUT.println(
        "delayed-task-operator sandbox on the fabric8 MOCK API server, not Kubernetes: "
            + (requested == ControlPlane.MOCK
                ? "-Dsandbox.controlPlane=mock asked for it."
                : "no kube-apiserver/etcd/kubectl\n  under ${KUBE_API_TEST_DIR:-~/.kubeapitest}/k8s/ (tools/build-control-plane.sh builds them)."));
    OUT.println(
        "  With the mock, kubectl apply needs --validate=false, and get -w, wait, describe's Events and");
    OUT.println("  create namespace do not work.");
    SandboxApiServer api =
        new SandboxApiServer(project.resolve("crds/delayedtasks.delayedtask.io-v1.yml"), 0);
    running.push(api);
    kubeconfig = Kubeconfig.write(work.resolve("kubeconfig"), api.url(), "default");
    client = api.client();
    // The mock has no kubelet: something has to finish the Jobs the operator creates.
    running.push(new JobCompleter(client, MOCK_JOB_RUNTIME));
    return api.url();
  }

  private void printUsage(Path project, String apiUrl, RedisProcess redis, int httpPort) {
    String kubeconfigPath = project.relativize(kubeconfig).toString();
    if (kube == null) {
      String k = "kubectl --kubeconfig " + kubeconfigPath;
      OUT.println(
          """

          delayed-task-operator sandbox is running
            Kubernetes API (mock, CRUD) : %s
            Redis                       : %s
            metrics / health            : http://localhost:%d/metrics  /healthz  /readyz

          Try, in another terminal:
            %s apply --validate=false -f k8s/examples/
            %s get dt -o custom-columns=NAME:.metadata.name,DUE:.status.dueTime,PHASE:.status.phase,JOB:.status.jobName
            %s get jobs
            %s delete dt <name>
          (the mock API server does not do watch (-w), wait, or server-side apply)

          Phase changes are printed below as they happen. Ctrl-C stops everything.
          """
              .formatted(apiUrl, redis.uri(), httpPort, k, k, k, k));
      return;
    }
    OUT.println(
        """

        delayed-task-operator sandbox is running
          Kubernetes API (kube-apiserver %s) : %s
          Jobs                               : %s
          Redis                              : %s
          metrics / health                   : http://localhost:%d/metrics  /healthz  /readyz

        Try, in another terminal (the alias is the kubectl built with the API server, the same release;
        kubectl 1.32 also did all of this, though outside the supported version skew):
          export KUBECONFIG=%s
          alias kubectl=%s
          kubectl apply -f k8s/examples/
          kubectl get dt
          kubectl get dt -w
          kubectl wait --for=jsonpath='{.status.phase}'=Succeeded dt/hello-in-30s --timeout=60s
          kubectl describe dt hello-in-30s
          kubectl get jobs,pods
          kubectl delete dt hello-in-30s

        Phase changes are printed below as they happen. Ctrl-C stops everything.
        """
            .formatted(
                kube.binaries().version(),
                apiUrl,
                jobsRunOnKwok
                    ? "run by the Job controller on kwok's fake Node "
                        + KwokCluster.NODE
                        + " (a pod labelled "
                        + KwokCluster.OUTCOME_LABEL
                        + "="
                        + KwokCluster.FAIL
                        + " fails)"
                    : "marked Complete by the sandbox "
                        + MOCK_JOB_RUNTIME.toSeconds()
                        + " s after they appear",
                redis.uri(),
                httpPort,
                kubeconfigPath,
                kube.binaries().binary("kubectl")));
  }

  /**
   * The examples, applied the way a user would: with kubectl on the real server (validation on).
   */
  private void applyExamples(Path examples) throws IOException {
    if (!Files.isDirectory(examples)) {
      OUT.println("(no " + examples + " to apply)");
      return;
    }
    if (kube != null) {
      RealKubernetes.Kubectl.Result applied = kube.kubectl("apply", "-f", examples.toString());
      OUT.print(
          applied.ok()
              ? applied.stdout()
              : "could not apply " + examples + ": " + applied.output());
      return;
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(examples)) {
      files =
          listing
              .filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
              .sorted()
              .toList();
    }
    for (Path file : files) {
      try (InputStream in = Files.newInputStream(file)) {
        for (HasMetadata item : client.load(in).items()) {
          client.resource(item).inNamespace("default").createOr(existing -> existing.update());
          OUT.println("applied " + examples.getParent().getParent().relativize(file));
        }
      } catch (RuntimeException e) {
        OUT.println("could not apply " + file.getFileName() + ": " + e.getMessage());
      }
    }
  }

  /** A client of the sandbox's API server. */
  KubernetesClient client() {
    return client;
  }

  /** The kubeconfig the sandbox wrote for kubectl. */
  Path kubeconfig() {
    return kubeconfig;
  }

  /** The real control plane, when the sandbox runs on it. */
  Optional<RealKubernetes> realKubernetes() {
    return Optional.ofNullable(kube);
  }

  /** True when Jobs run for real: the Job controller, the scheduler and kwok's fake Node. */
  boolean jobsRunOnKwok() {
    return jobsRunOnKwok;
  }

  /** Stops everything in the reverse order of starting. */
  void stop() {
    while (!running.isEmpty()) {
      try {
        running.pop().close();
      } catch (Exception e) {
        OUT.println("while stopping: " + e);
      }
    }
    OUT.println("sandbox stopped");
  }

  /** The port a person expects (8080) when it is free, else {@link Ports#freePort}. */
  private static int freePortPreferring(int preferred) throws IOException {
    try (ServerSocket socket = new ServerSocket(preferred)) {
      return socket.getLocalPort();
    } catch (IOException busy) {
      return Ports.freePort();
    }
  }
}
