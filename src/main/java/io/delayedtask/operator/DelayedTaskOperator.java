package io.delayedtask.operator;

import io.delayedtask.operator.config.ConfigException;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.http.HttpEndpoints;
import io.delayedtask.operator.leader.DueClaims;
import io.delayedtask.operator.leader.InformedQueues;
import io.delayedtask.operator.leader.InformerTaskCache;
import io.delayedtask.operator.leader.Leadership;
import io.delayedtask.operator.leader.LeaseHandover;
import io.delayedtask.operator.leader.QueueHolds;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.leader.ScheduleKeeper;
import io.delayedtask.operator.leader.ScheduleResync;
import io.delayedtask.operator.reconcile.AdmissionPolicies;
import io.delayedtask.operator.reconcile.DelayedTaskReconciler;
import io.delayedtask.operator.reconcile.FireMetrics;
import io.delayedtask.operator.reconcile.ReconcileExecutor;
import io.delayedtask.operator.reconcile.Recording;
import io.delayedtask.operator.reconcile.ScheduleSide;
import io.delayedtask.operator.reconcile.SinkDelivery;
import io.delayedtask.operator.reconcile.TaskCloner;
import io.delayedtask.operator.reconcile.TaskDecider;
import io.delayedtask.operator.reconcile.TaskEvents;
import io.delayedtask.operator.reconcile.TaskUpdates;
import io.delayedtask.operator.reconcile.TaskWorld;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.delayedtask.operator.sink.DeliveryStarter;
import io.delayedtask.operator.sink.NameResolver;
import io.delayedtask.operator.task.cache.CachedObjects;
import io.delayedtask.operator.task.cache.LeanItemStore;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.trace.Tracing;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.BooleanSupplier;
import javax.net.SocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator process: configuration, clients, schedule, operator, HTTP; stopped in reverse.
 *
 * <p>{@link #main} is what {@code java -jar} runs. {@link #start(OperatorConfig, KubernetesClient,
 * Options)} runs the same wiring in-process for tests and the dev sandbox, and {@link #close()}
 * stops it.
 */
public final class DelayedTaskOperator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DelayedTaskOperator.class);

  /** Exit status for a bad configuration value (docs/reference.md). */
  static final int BAD_CONFIGURATION = 2;

  /** JOSDK's default number of reconcile threads. */
  private static final int RECONCILE_THREADS =
      ConfigurationService.DEFAULT_RECONCILIATION_THREADS_NUMBER;

  /**
   * How long a new leader's reconciles other than firings wait for its first resync
   * (ReconcileExecutor): until it has written the missing entries, about 2 s for 50,000 tasks; the
   * bound matters when it cannot run.
   */
  private static final Duration SCHEDULE_FIRST_AT_MOST = Duration.ofSeconds(5);

  /** Everything to stop, latest first. */
  private final Deque<AutoCloseable> stopInReverse = new ArrayDeque<>();

  private volatile Leadership
      leadership; // not final: the reconciler asks it whether this instance still leads
  private final HttpEndpoints http;
  private final TaskSchedule schedule;
  private final boolean exitOnStopLeading;
  private volatile boolean closing;

  /**
   * What differs between production and tests: whether losing the lease ends the process, how often
   * Redis is probed, and the clock. Lease timing is configuration ({@code
   * DELAYEDTASK_LEASE_DURATION_SECONDS}), so in-process and jar-level tests set it alike.
   */
  /**
   * How the process runs beyond its configuration.
   *
   * @param sinkResolver how sink host names are resolved (tests map names without DNS)
   * @param sinkSockets the sockets sink requests use (tests: loopback only, so that a broken guard
   *     fails instead of reaching another address)
   */
  public record Options(
      boolean exitOnStopLeading,
      Duration redisProbeInterval,
      Clock clock,
      NameResolver sinkResolver,
      SocketFactory sinkSockets,
      Map<String, String> tracingEnv) {

    public Options(
        boolean exitOnStopLeading,
        Duration redisProbeInterval,
        Clock clock,
        NameResolver sinkResolver,
        SocketFactory sinkSockets) {
      this(
          exitOnStopLeading, redisProbeInterval, clock, sinkResolver, sinkSockets, System.getenv());
    }

    /**
     * The variables OpenTelemetry's SDK is configured from ({@code OTEL_*}, see trace/Tracing); the
     * process's environment unless a test gives its own.
     */
    public Options withTracingEnv(Map<String, String> env) {
      return new Options(
          exitOnStopLeading, redisProbeInterval, clock, sinkResolver, sinkSockets, Map.copyOf(env));
    }

    /** java -jar: losing the lease ends the process so Kubernetes restarts it as a standby. */
    public static Options production() {
      return new Options(
          true,
          Duration.ofSeconds(2),
          Clock.systemUTC(),
          NameResolver.SYSTEM,
          SocketFactory.getDefault());
    }

    /** In-process (tests, sandbox): like production, but never calls System.exit. */
    public static Options inProcess() {
      return production().withExitOnStopLeading(false);
    }

    public Options withExitOnStopLeading(boolean exit) {
      return new Options(exit, redisProbeInterval, clock, sinkResolver, sinkSockets, tracingEnv);
    }

    public Options withRedisProbeInterval(Duration interval) {
      return new Options(exitOnStopLeading, interval, clock, sinkResolver, sinkSockets, tracingEnv);
    }

    /** The clock for due checks, firedTime and conditions (a test can set it off true time). */
    public Options withClock(Clock other) {
      return new Options(
          exitOnStopLeading, redisProbeInterval, other, sinkResolver, sinkSockets, tracingEnv);
    }

    public Options withSinkNetwork(NameResolver resolver, SocketFactory sockets) {
      return new Options(
          exitOnStopLeading, redisProbeInterval, clock, resolver, sockets, tracingEnv);
    }
  }

  public static void main(String[] args) {
    // --help and --version print and exit before anything starts.
    OptionalInt exitAfterArguments =
        CommandLine.handle(args, BuildInfo.ofThisBuild(), System.out, System.err);
    if (exitAfterArguments.isPresent()) {
      System.exit(exitAfterArguments.getAsInt());
      return;
    }
    // 0. Before anything loads CompletableFuture: see poolAsyncSteps().
    poolAsyncSteps();
    // 1. Configuration: a bad value stops the process here, naming the variable.
    OperatorConfig config;
    try {
      config = OperatorConfig.fromEnv(System.getenv());
    } catch (ConfigException e) {
      System.err.println(e.getMessage());
      System.exit(BAD_CONFIGURATION);
      return;
    }
    LOG.info("Starting with {}", config);
    // 2. Kubernetes client: in-cluster service account, else KUBECONFIG, else ~/.kube/config.
    KubernetesClient client = new KubernetesClientBuilder().build();
    // 3. Everything else; stopped in reverse on SIGTERM.
    DelayedTaskOperator operator;
    try {
      operator = start(config, client, Options.production());
    } catch (ConfigException e) {
      // An OTEL_* value OpenTelemetry's SDK refused (trace/Tracing).
      System.err.println(e.getMessage());
      client.close();
      System.exit(BAD_CONFIGURATION);
      return;
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  operator.close();
                  client.close();
                },
                "shutdown"));
  }

  /**
   * With one or two CPUs (a pod limited to 2 cores, say) the JVM's common ForkJoinPool has a
   * parallelism of 1, and CompletableFuture then runs every asynchronous step on a thread of its
   * own, started for it and thrown away. The JDK HTTP client, which the Kubernetes client uses,
   * takes such a step for every response: at a hundred requests a second the operator spent most of
   * its CPU starting threads (270 a second in a profile). A common pool of at least two keeps them.
   * A value set on the command line wins.
   */
  static void poolAsyncSteps() {
    String parallelism = "java.util.concurrent.ForkJoinPool.common.parallelism";
    if (System.getProperty(parallelism) == null) {
      System.setProperty(
          parallelism,
          Integer.toString(Math.max(2, Runtime.getRuntime().availableProcessors() - 1)));
    }
  }

  /** In-process start with production timing, never calling System.exit. */
  public static DelayedTaskOperator start(OperatorConfig config, KubernetesClient client) {
    return start(config, client, Options.inProcess());
  }

  public static DelayedTaskOperator start(
      OperatorConfig config, KubernetesClient client, Options options) {
    return new DelayedTaskOperator(config, client, options);
  }

  private DelayedTaskOperator(OperatorConfig config, KubernetesClient client, Options options) {
    Clock clock = options.clock();
    exitOnStopLeading = options.exitOnStopLeading();
    try {
      // 1. Metrics: one registry for ours, JOSDK's and the JVM's, scraped at /metrics.
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      new JvmMemoryMetrics().bindTo(registry);
      stopInReverse.push(registry::close);

      // 2. The Redis schedule. Connecting does not require Redis to be up: it is retried.
      schedule = ScheduleWiring.connect(config);
      stopInReverse.push(schedule);

      // 3. The leader's side: claiming due entries and handing them to the reconciler, and keeping
      //    the schedule in line with the tasks (from the informer cache, once it has synced).
      // A sink is validated with the spec (SinkWiring: which kinds are Addressables); its delivery
      // is
      // built below, with the reconciler.
      SinkWiring sink = SinkWiring.of(config, client, stopInReverse::push);
      SpecValidator validator = new SpecValidator(sink.specRules());
      InformerTaskCache taskCache = new InformerTaskCache();
      ScheduleResync resync = new ScheduleResync(taskCache, client, schedule, validator, registry);
      ScheduleKeeper keeper =
          new ScheduleKeeper(
              schedule,
              resync,
              config.resyncInterval(),
              options.redisProbeInterval(),
              clock,
              registry);
      stopInReverse.push(keeper);
      DueClaims dueClaims = new DueClaims(taskCache, client);
      leadership =
          new Leadership(
              keeper,
              dueClaims,
              () -> ScheduleWiring.startPoller(schedule, dueClaims, config.claimLease()));
      leadership.bindTo(registry);
      stopInReverse.push(leadership);

      // 4. The operator: the reconciler on DelayedTasks, their Jobs and the claims, leader-elected.
      //    It is the one writer of every task's status, and fires the tasks the leader claims: its
      //    threads take the reconciles of claimed tasks first, then by turns the reconciles that
      //    record a sink delivery's answer (a few at once: they come in bursts) and the rest.
      DeliveryOutcomes deliveryOutcomes = sink.outcomes();
      ReconcileExecutor reconcileThreads =
          new ReconcileExecutor(
              RECONCILE_THREADS, dueClaims::holdsClaim, deliveryOutcomes::awaitsRecord);
      dueClaims.onClaim(reconcileThreads::promote);
      keeper.onActivate(
          firstResync -> reconcileThreads.holdOthersUntil(firstResync, SCHEDULE_FIRST_AT_MOST));
      Operator operator =
          new Operator(
              o -> {
                o.withKubernetesClient(client)
                    .withExecutorService(reconcileThreads)
                    // The reconciler never has JOSDK patch a task (StatusWriter PUTs with the
                    // cached
                    // resourceVersion; the legacy finalizer goes by a JSON patch), so this changes
                    // no
                    // request on a real API server. It keeps JOSDK's own paths off server-side
                    // apply,
                    // which the fabric8 mock in CRUD mode lacks: the fault tests (faults/) run this
                    // operator against that mock to inject API failures on cue.
                    .withUseSSAToPatchPrimaryResource(false)
                    .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry))
                    .withCloseClientOnStop(false)
                    .withStopOnInformerErrorDuringStartup(false)
                    // A Job this operator just created stays in the Job cache's overlay until the
                    // informer
                    // has that version or a newer one, and the informer's event for it does not
                    // wake the
                    // task again (resourceVersions are etcd's revisions, which grow).
                    .withParseResourceVersions(true)
                    .withResourceCloner(new TaskCloner(client.getKubernetesSerialization()));
                if (config.leaderElection()) {
                  o.withLeaderElectionConfiguration(
                      leaderElection(config, leadership, this::afterLosingLease));
                }
              });
      // The admission policy that checks each task's author: without it no Job and no token (fail
      // closed).
      AdmissionPolicies admissionPolicies =
          config.checksAdmissionPolicy()
              ? AdmissionPolicies.watch(
                  client,
                  config.admissionPolicyBindings(),
                  config.sink().serviceAccount(),
                  config.sink().signingSecret(),
                  config.namespaces(),
                  registry)
              : AdmissionPolicies.unchecked();
      stopInReverse.push(admissionPolicies);
      if (!config.checksAdmissionPolicy()) {
        LOG.warn(
            "{}=none: Jobs are created and tokens sent without checking for the admission policy, so any "
                + "author of a DelayedTask gets them whatever their RBAC",
            OperatorConfig.ADMISSION_POLICY);
      }
      TaskDecider decider =
          new TaskDecider(
              validator,
              SecondsSetting.finishedTtl(config.finishedTtl().map(Duration::toSeconds)),
              SecondsSetting.startingDeadline(
                  config.defaultStartingDeadline().map(Duration::toSeconds)));
      TaskEvents events = new TaskEvents(client, clock);
      // Spans exported only when OpenTelemetry's own variables ask for it; trace context always
      // propagated.
      Tracing tracing = Tracing.fromEnvironment(options.tracingEnv());
      stopInReverse.push(tracing);
      if (tracing.exporting()) {
        LOG.info(
            "Tracing: spans exported by the OpenTelemetry SDK, configured by the OTEL_* variables");
      }
      FireMetrics fireMetrics = new FireMetrics(registry);
      // Sink deliveries: sent without a reconcile thread waiting, answers back as events.
      DeliveryStarter deliveryStarter =
          sink.deliveryStarter(options, registry, fireMetrics::lag, tracing);
      // Queues: the due tasks a queue holds are marked Queued (reported by the leader's claims),
      // the
      // DelayedTaskQueues' pause and limits go to the claims, and their status is written while
      // leading.
      QueueHolds queueHolds = new QueueHolds();
      stopInReverse.push(schedule.onQueueHolds(queueHolds::report));
      BooleanSupplier firing = () -> !config.leaderElection() || leadership.isFiring();
      InformedQueues queues =
          new InformedQueues(
              client,
              config.namespaces(),
              schedule,
              firing,
              clock,
              registry,
              (queue, id) ->
                  ScheduleIds.parse(id)
                      .flatMap(ref -> taskCache.get(ref.namespace(), ref.name()))
                      .ifPresent(
                          task ->
                              events.normal(
                                  task,
                                  TaskEvents.QUEUE_DELETED,
                                  "DelayedTaskQueue "
                                      + queue.name()
                                      + " was deleted: this task is released from it and fires without its limits")));
      stopInReverse.push(queues);
      DelayedTaskReconciler reconciler =
          new DelayedTaskReconciler(
              decider,
              new TaskWorld(taskCache, admissionPolicies, queueHolds, clock, firing),
              new ScheduleSide(schedule, dueClaims, keeper::scheduleBehind),
              new Recording(events, fireMetrics, tracing),
              new SinkDelivery(deliveryStarter, deliveryOutcomes));
      operator.register(
          reconciler,
          c -> {
            // Only spec changes (a new generation) and the fire-now annotation reconcile a task,
            // besides
            // its Jobs, its claims and deletion: its status has one writer, this reconciler, which
            // sees
            // its own writes.
            c.withGenerationAware(false);
            c.withOnUpdateFilter(new TaskUpdates());
            // No finalizer (a delete never waits for the operator), yet deletions reach the
            // reconciler,
            // which removes the task's entry.
            c.withTriggerReconcilerOnAllEvents(true);
            // No periodic reconcile per task: the Job informer, the claims and the task's own watch
            // bring every change, TTLs reschedule themselves, and the schedule resync repairs Redis
            // in
            // bulk. A timer per task would cost work per task forever and hide a missing event
            // handler.
            c.withReconciliationMaxInterval(null);
            // The cache without managedFields and large tasks without their large fields, listed in
            // pages: 50,000 tasks, or 2,000 large ones, neither fill the heap nor arrive in one
            // response
            // of hundreds of megabytes. Several namespaces mean an informer each, which cannot
            // share one
            // store (each relist would drop the others' objects): they keep everything.
            if (config.watchesAllNamespaces() || config.namespaces().size() == 1) {
              c.withItemStore(LeanItemStore.forTasks());
            }
            c.withInformerListLimit(CachedObjects.TASKS_PER_LIST_PAGE);
            if (config.watchesAllNamespaces()) {
              c.watchingAllNamespaces();
            } else {
              c.settingNamespaces(config.namespaces());
            }
          });
      // Once JOSDK has started, the resync may read the cache as soon as its informers have listed
      // the
      // tasks (their own hasSynced, see InformerTaskCache). Without leader election this instance
      // fires from then on (with it, from becoming leader).
      // Leader election: a leader that stops releases the Lease once its claims are settled and
      // JOSDK
      // has stopped (stopped after the operator, below); a standby tries for it the moment it is
      // free.
      LeaseHandover handover =
          config.leaderElection()
              ? new LeaseHandover(
                  client,
                  config.leaseNamespace(),
                  config.leaseName(),
                  config.identity(),
                  config.leaseDuration(),
                  leadership::isFiring)
              : null;
      OperatorStarter starter =
          new OperatorStarter(
              operator,
              client,
              () -> {
                taskCache.startedWith(operator.getRuntimeInfo());
                queues.start();
                if (config.leaderElection()) {
                  handover.startNudging(operator);
                  keeper.requestResync();
                } else {
                  leadership.start();
                }
              });
      if (handover != null) {
        stopInReverse.push(
            () -> {
              handover.close();
              // An operator that never started (API server unreachable) never led: nothing to
              // release,
              // and asking would hold the shutdown through the client's retries.
              if (starter.started()) {
                handover.release();
              }
            });
      }
      stopInReverse.push(starter);

      // 5. HTTP: /metrics, /healthz, /readyz.
      http =
          HttpEndpoints.start(
              config.httpPort(),
              registry,
              () -> {
                if (!starter.started()) {
                  return "not ready: the operator has not started (API server unreachable?)";
                }
                if (!operator.getRuntimeInfo().allEventSourcesAreHealthy()) {
                  return "not ready: informers are not synced with the API server";
                }
                return keeper.redisReachable() ? null : "not ready: Redis is unreachable";
              });
      stopInReverse.push(http);

      // 6. Go: probe Redis, start the operator once the API server answers.
      keeper.start();
      starter.start();
      LOG.info("Started; HTTP on port {}", http.port());
    } catch (RuntimeException e) {
      closing = true;
      closeInReverse();
      throw e;
    }
  }

  /**
   * Production ends the process when the lease is lost (options.exitOnStopLeading). Done here
   * rather than by JOSDK's own exitOnStopLeading, which would also call System.exit while the
   * shutdown hook stops the operator, and System.exit inside a shutdown hook blocks forever.
   */
  private void afterLosingLease() {
    if (exitOnStopLeading && !closing) {
      LOG.error("Lost the leader lease; exiting so that this instance restarts as a standby");
      new Thread(() -> System.exit(1), "exit-after-losing-lease").start();
    }
  }

  private static LeaderElectionConfiguration leaderElection(
      OperatorConfig config, Leadership leadership, Runnable afterLosingLease) {
    return LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(config.leaseName())
        .withLeaseNamespace(config.leaseNamespace())
        .withIdentity(config.identity())
        .withLeaseDuration(config.leaseDuration())
        .withRenewDeadline(config.leaseRenewDeadline())
        .withRetryPeriod(config.leaseRetryPeriod())
        .withLeaderCallbacks(leadership.leaderCallbacks(afterLosingLease))
        .withExitOnStopLeading(false) // see afterLosingLease()
        .build();
  }

  /**
   * The port /metrics, /healthz and /readyz are served on (useful with DELAYEDTASK_HTTP_PORT=0).
   */
  public int httpPort() {
    return http.port();
  }

  /** True while this instance fires due tasks (it leads, or leader election is off). */
  public boolean isFiring() {
    return leadership.isFiring();
  }

  /**
   * Stops everything in the reverse order of starting. Idempotent. A leader first hands over: it
   * claims nothing more and lets its claims in flight settle (their reconciles finish), then JOSDK
   * stops, and the Lease is released, so a standby fires from the next instant on.
   */
  @Override
  public void close() {
    closing = true;
    leadership.handOver();
    closeInReverse();
  }

  private synchronized void closeInReverse() {
    if (stopInReverse.isEmpty()) {
      return;
    }
    LOG.info("Stopping");
    while (!stopInReverse.isEmpty()) {
      AutoCloseable next = stopInReverse.pop();
      try {
        next.close();
      } catch (Exception e) {
        LOG.warn("Stopping {} failed: {}", next.getClass().getSimpleName(), e.toString());
      }
    }
    LOG.info("Stopped");
  }
}
