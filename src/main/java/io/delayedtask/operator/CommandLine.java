package io.delayedtask.operator;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.trace.Tracing;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * {@code java -jar delayed-task-operator.jar --help} and {@code --version}. The operator takes no
 * other argument: everything it needs comes from the environment, which {@code --help} lists with
 * each variable's default and meaning. Variable names are the constants of {@link OperatorConfig}
 * and {@link SinkConfig}, and defaults come from what they build from an empty environment, so the
 * help cannot drift from the code that reads them (CommandLineTest checks that none is missing).
 */
final class CommandLine {
  /** Exit status for an argument the operator does not take, as for a bad configuration value. */
  static final int BAD_USAGE = DelayedTaskOperator.BAD_CONFIGURATION;

  static final String USAGE = "Usage: java -jar delayed-task-operator.jar [--help | --version]";

  /** One environment variable as --help prints it. */
  record Variable(String name, String defaultValue, String meaning) {}

  private CommandLine() {}

  /**
   * Handles the command line: no argument starts the operator (empty result); {@code --help} and
   * {@code --version} print and return 0; anything else prints the usage to {@code err} and returns
   * {@link #BAD_USAGE}.
   */
  static OptionalInt handle(String[] args, BuildInfo build, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      return OptionalInt.empty();
    }
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      out.print(help(build));
      out.flush();
      return OptionalInt.of(0);
    }
    if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-V"))) {
      out.println(build.line());
      out.flush();
      return OptionalInt.of(0);
    }
    err.println(
        "Unknown argument '"
            + String.join(" ", args)
            + "'; the operator is configured through the "
            + "environment (see --help).");
    err.println(USAGE);
    err.flush();
    return OptionalInt.of(BAD_USAGE);
  }

  static String help(BuildInfo build) {
    StringBuilder text =
        new StringBuilder()
            .append(build.line())
            .append("\n\n")
            .append(USAGE)
            .append("\n\n")
            .append(
                """
            Reconciles DelayedTasks (delayedtask.io/v1alpha1) into a Redis schedule and fires each one once, at
            its due time. Kubernetes is found the standard way: the in-cluster service account, else KUBECONFIG,
            else ~/.kube/config. Everything else comes from these environment variables; a bad value stops the
            process at start with exit status 2 and one line naming the variable.

            """);
    for (Variable variable : variables()) {
      text.append("  ")
          .append(variable.name())
          .append("  (default: ")
          .append(variable.defaultValue())
          .append(")\n")
          .append("      ")
          .append(variable.meaning())
          .append("\n");
    }
    text.append("\n").append(Tracing.HELP);
    return text.append(
            "\nServes /metrics, /healthz and /readyz on DELAYEDTASK_HTTP_PORT. "
                + "Documentation: docs/operations.md in the source repository.\n")
        .toString();
  }

  /** Every variable the operator reads, in the order of docs/operations.md. */
  static List<Variable> variables() {
    OperatorConfig config = OperatorConfig.fromEnv(Map.of());
    SinkConfig sink = SinkConfig.defaults();
    return List.of(
        new Variable(
            OperatorConfig.REDIS_URI,
            config.redisUri(),
            "Lettuce URI: redis://, rediss:// (TLS), redis-sentinel://host:port#master"),
        new Variable(
            OperatorConfig.REDIS_CLUSTER,
            Boolean.toString(config.redisCluster()),
            "true: the URI names Redis Cluster seeds (redis://h1:p1,h2:p2,h3:p3)"),
        new Variable(
            OperatorConfig.REDIS_SHARDS,
            Integer.toString(config.redisShards()),
            "1 to 1024 shards of the schedule; with Redis Cluster, at least the number of masters"),
        new Variable(
            OperatorConfig.REDIS_PASSWORD,
            "none",
            "Redis password, never logged; overrides one in the URI"),
        new Variable(
            OperatorConfig.KEY_PREFIX,
            config.keyPrefix(),
            "prefix of every Redis key the operator owns"),
        new Variable(OperatorConfig.NAMESPACES, "all", "comma-separated namespaces to watch"),
        new Variable(
            OperatorConfig.LEADER_ELECTION,
            Boolean.toString(config.leaderElection()),
            "elect one firing instance through a coordination.k8s.io/v1 Lease"),
        new Variable(OperatorConfig.LEASE_NAME, config.leaseName(), "the Lease's name"),
        new Variable(
            OperatorConfig.LEASE_NAMESPACE,
            "the pod's namespace (POD_NAMESPACE), else " + config.leaseNamespace(),
            "the Lease's namespace"),
        new Variable(
            OperatorConfig.IDENTITY,
            "HOSTNAME, else a random id",
            "this instance's name in the Lease"),
        new Variable(
            OperatorConfig.RESYNC_SECONDS,
            Long.toString(config.resyncInterval().toSeconds()),
            "at least this often the Redis schedule is checked against the DelayedTasks and repaired"),
        new Variable(
            OperatorConfig.HTTP_PORT,
            Integer.toString(config.httpPort()),
            "port of /metrics, /healthz and /readyz"),
        new Variable(
            OperatorConfig.LEASE_DURATION_SECONDS,
            Long.toString(config.leaseDuration().toSeconds()),
            "2 to 3600: how long a leader's Lease holds without renewal (how long a dead leader is waited for)"),
        new Variable(
            OperatorConfig.CLAIM_LEASE_SECONDS,
            Long.toString(config.claimLease().toSeconds()),
            "how long a claimed schedule entry stays in flight before another poller may take it back"),
        new Variable(
            OperatorConfig.FINISHED_TTL_SECONDS,
            "none (finished tasks are kept)",
            "ttlSecondsAfterFinished for tasks that set none; tasks a GitOps tool manages are never deleted"),
        new Variable(
            OperatorConfig.DEFAULT_STARTING_DEADLINE_SECONDS,
            "none (no deadline)",
            "startingDeadlineSeconds for tasks that set none (0 to 315360000): a task re-created long after its due time is Missed"),
        new Variable(
            SinkConfig.ALLOWED_URIS,
            sink.allowedUris().isEmpty() ? "none" : String.join(",", sink.allowedUris()),
            "comma-separated URLs allowing an absolute spec.sink.uri or an ExternalName's URL, compared by scheme, "
                + "host, port and path segments (https://hooks.example.com/acme allows /acme and /acme/x)"),
        new Variable(
            SinkConfig.CLUSTER_DOMAIN,
            sink.clusterDomain(),
            "the cluster domain a spec.sink.ref Service's URL ends in"),
        new Variable(
            SinkConfig.SERVICE_ACCOUNT,
            sink.serviceAccount(),
            "the ServiceAccount, in each task's namespace, whose tokens a spec.sink.audience sends"),
        new Variable(
            SinkConfig.SIGNING_SECRET,
            sink.signingSecret(),
            "the Secret, in each task's namespace, whose key spec.sink.signing.key names holds the Standard Webhooks "
                + "signing secret (whsec_<base64>)"),
        new Variable(
            SinkConfig.MAX_IN_FLIGHT,
            Integer.toString(sink.maxInFlight()),
            "open delivery requests at once"),
        new Variable(
            SinkConfig.MAX_IN_FLIGHT_PER_HOST,
            Integer.toString(sink.maxInFlightPerHost()),
            "open delivery requests to one host at once"),
        new Variable(
            SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE,
            Integer.toString(sink.maxInFlightPerNamespace()),
            "open delivery requests for the tasks of one namespace at once; a request waiting for a slot counts the "
                + "wait against its delivery.timeout"),
        new Variable(
            OperatorConfig.ADMISSION_POLICY,
            String.join(",", config.admissionPolicyBindings()),
            "comma-separated ValidatingAdmissionPolicyBindings that must exist, each with its policy, before a Job is "
                + "created or a token sent, compared by content with the shipped policies (missing: such tasks wait, "
                + "Ready=False AdmissionPolicyMissing; a spec written meanwhile: NotAdmitted until written again); none: "
                + "no check"),
        // Read by logback.xml, not by OperatorConfig.
        new Variable(
            OperatorConfig.LOG_FORMAT,
            "text",
            "json: one JSON object per line (with the task's namespace/name) for log pipelines"),
        new Variable(OperatorConfig.LOG_LEVEL, "INFO", "the operator's own log level"));
  }
}
