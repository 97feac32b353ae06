package io.delayedtask.operator.task.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.CeOverrides;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.sink.RefKinds;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpecBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpecValidatorTest {
  private static final String CREATED = "2026-12-01T10:00:00Z";
  private final SpecValidator validator = new SpecValidator(SinkSpecRules.defaults());

  static Stream<Arguments> validSpecs() {
    return Stream.of(
        Arguments.of(
            "runAt UTC", spec(s -> s.setRunAt("2026-12-03T07:00:00Z")), "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "runAt lower-case t and z",
            spec(s -> s.setRunAt("2026-12-03t07:00:00z")),
            "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "runAt offset",
            spec(s -> s.setRunAt("2026-12-03T08:00:00+01:00")),
            "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "runAt negative offset",
            spec(s -> s.setRunAt("2026-12-03T02:30:00-04:30")),
            "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "runAt fraction",
            spec(s -> s.setRunAt("2026-12-03T07:00:00.5Z")),
            "2026-12-03T07:00:00.500Z"),
        Arguments.of(
            "runAt nanoseconds truncated",
            spec(s -> s.setRunAt("2026-12-03T07:00:00.123456789Z")),
            "2026-12-03T07:00:00.123Z"),
        Arguments.of(
            "runAt year 9999",
            spec(s -> s.setRunAt("9999-12-31T23:59:59Z")),
            "9999-12-31T23:59:59.000Z"),
        Arguments.of(
            "runAt in the past",
            spec(s -> s.setRunAt("2001-01-01T00:00:00Z")),
            "2001-01-01T00:00:00.000Z"),
        Arguments.of("delay 500ms", spec(s -> s.setDelay("500ms")), "2026-12-01T10:00:00.500Z"),
        Arguments.of("delay 1h30m", spec(s -> s.setDelay("1h30m")), "2026-12-01T11:30:00.000Z"),
        Arguments.of("delay 1.5h", spec(s -> s.setDelay("1.5h")), "2026-12-01T11:30:00.000Z"),
        Arguments.of("delay PT10M", spec(s -> s.setDelay("PT10M")), "2026-12-01T10:10:00.000Z"),
        Arguments.of("delay 0s", spec(s -> s.setDelay("0s")), "2026-12-01T10:00:00.000Z"),
        Arguments.of(
            "jobTemplate in own namespace",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setJobTemplate(template("tasks"));
                }),
            "2026-12-01T10:01:00.000Z"),
        Arguments.of(
            "payload",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(Map.of("order-id", "42", "customer.email", "a@b.c"));
                }),
            "2026-12-01T10:01:00.000Z"),
        Arguments.of(
            "the largest payload: 64 keys of 4096 characters, keys of 55",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(payload(64, 4096, 55));
                }),
            "2026-12-01T10:01:00.000Z"),
        Arguments.of(
            "the longest deadline and TTL (10 years)",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setStartingDeadlineSeconds(315_360_000L);
                  s.setTtlSecondsAfterFinished(315_360_000L);
                }),
            "2026-12-01T10:01:00.000Z"),
        Arguments.of(
            "a runAt of 64 characters, the most the CRD allows",
            spec(s -> s.setRunAt(" ".repeat(44) + "2026-12-03T07:00:00Z")),
            "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "a deadline and TTL of 0",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setStartingDeadlineSeconds(0L);
                  s.setTtlSecondsAfterFinished(0L);
                }),
            "2026-12-01T10:01:00.000Z"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("validSpecs")
  void computesTheDueTime(String name, DelayedTask task, String expectedDue) {
    Validation validation = validator.validate(task);
    assertThat(validation).isInstanceOf(Validation.Valid.class);
    assertThat(Times.format(((Validation.Valid) validation).due())).isEqualTo(expectedDue);
  }

  static Stream<Arguments> invalidSpecs() {
    return Stream.of(
        Arguments.of("neither runAt nor delay", spec(s -> {}), "neither spec.runAt nor spec.delay"),
        Arguments.of(
            "both runAt and delay",
            spec(
                s -> {
                  s.setRunAt("2026-12-03T07:00:00Z");
                  s.setDelay("10m");
                }),
            "spec.runAt and spec.delay are both set"),
        Arguments.of(
            "runAt not a time",
            spec(s -> s.setRunAt("tomorrow")),
            "spec.runAt 'tomorrow' is not an RFC 3339 time"),
        Arguments.of(
            "runAt without zone",
            spec(s -> s.setRunAt("2026-12-03T07:00:00")),
            "add Z or an offset"),
        Arguments.of(
            "runAt without seconds", spec(s -> s.setRunAt("2026-12-03T07:00Z")), "spec.runAt"),
        Arguments.of("runAt date only", spec(s -> s.setRunAt("2026-12-03")), "spec.runAt"),
        Arguments.of(
            "runAt month 13", spec(s -> s.setRunAt("2026-13-03T07:00:00Z")), "not a real date"),
        Arguments.of(
            "runAt February 30", spec(s -> s.setRunAt("2026-02-30T07:00:00Z")), "not a real date"),
        Arguments.of(
            "runAt offset too large",
            spec(s -> s.setRunAt("2026-12-03T07:00:00+25:00")),
            "not a real date"),
        Arguments.of(
            "runAt ten fraction digits",
            spec(s -> s.setRunAt("2026-12-03T07:00:00.1234567891Z")),
            "spec.runAt"),
        Arguments.of(
            "runAt five-digit year", spec(s -> s.setRunAt("10000-01-01T00:00:00Z")), "spec.runAt"),
        Arguments.of(
            "runAt of 65 characters, a time once trimmed",
            spec(s -> s.setRunAt(" ".repeat(45) + "2026-12-03T07:00:00Z")),
            "spec.runAt has 65 characters; at most 64: use an RFC 3339 time"),
        Arguments.of(
            "delay of 65 characters, a duration once trimmed",
            spec(s -> s.setDelay(" ".repeat(62) + "10m")),
            "spec.delay has 65 characters; at most 64: use a duration"),
        Arguments.of(
            "delay negative", spec(s -> s.setDelay("-5m")), "spec.delay '-5m' is negative"),
        Arguments.of(
            "delay not a duration",
            spec(s -> s.setDelay("ten minutes")),
            "spec.delay 'ten minutes' is not a duration"),
        Arguments.of("delay empty", spec(s -> s.setDelay("")), "spec.delay '' is empty"),
        Arguments.of(
            "delay beyond year 9999", spec(s -> s.setDelay("99999999h")), "before the year 10000"),
        Arguments.of(
            "delay overflowing",
            spec(s -> s.setDelay("99999999999999999999999999h")),
            "spec.delay"),
        Arguments.of(
            "negative startingDeadlineSeconds",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setStartingDeadlineSeconds(-1L);
                }),
            "spec.startingDeadlineSeconds is -1"),
        Arguments.of(
            "negative ttlSecondsAfterFinished",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setTtlSecondsAfterFinished(-5L);
                }),
            "spec.ttlSecondsAfterFinished is -5"),
        Arguments.of(
            "jobTemplate in another namespace",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setJobTemplate(template("kube-system"));
                }),
            "spec.jobTemplate.metadata.namespace is 'kube-system'"),
        Arguments.of(
            "jobTemplate without pod template",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setJobTemplate(new JobTemplateSpecBuilder().withNewSpec().endSpec().build());
                }),
            "spec.jobTemplate has no spec.template"),
        Arguments.of(
            "payload key not an annotation name",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(Map.of("bad key!", "x"));
                }),
            "spec.payload key 'bad key!'"),
        Arguments.of(
            "startingDeadlineSeconds above 10 years",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setStartingDeadlineSeconds(315_360_001L);
                }),
            "spec.startingDeadlineSeconds is 315360001; use a number of seconds from 0 to 315360000"),
        Arguments.of(
            "startingDeadlineSeconds that overflows an Instant",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setStartingDeadlineSeconds(Long.MAX_VALUE);
                }),
            "spec.startingDeadlineSeconds is " + Long.MAX_VALUE),
        Arguments.of(
            "ttlSecondsAfterFinished above 10 years",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setTtlSecondsAfterFinished(40_000_000_000_000_000L);
                }),
            "spec.ttlSecondsAfterFinished is 40000000000000000; use a number of seconds from 0 to 315360000"),
        Arguments.of(
            "65 payload keys",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(payload(65, 1, 5));
                }),
            "spec.payload has 65 keys; use at most 64"),
        Arguments.of(
            "a payload value of 4097 characters",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(Map.of("big", "x".repeat(4097)));
                }),
            "spec.payload.big has 4097 characters; use at most 4096"),
        Arguments.of(
            "a payload key of 56 characters",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setPayload(Map.of("k".repeat(56), "x"));
                }),
            "use at most 55 letters"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidSpecs")
  void refusesWithAMessageNamingTheField(String name, DelayedTask task, String expectedMessage) {
    Validation validation = validator.validate(task);
    assertThat(validation).isInstanceOf(Validation.Invalid.class);
    String message = ((Validation.Invalid) validation).message();
    assertThat(message).contains(expectedMessage).contains("spec.");
  }

  /** spec.timeZone: wall-clock runAt in the zone, across both DST changes; output always UTC. */
  static Stream<Arguments> timeZones() {
    return Stream.of(
        Arguments.of(
            "Berlin winter (CET)",
            "Europe/Berlin",
            "2026-12-03T07:00:00",
            "2026-12-03T06:00:00.000Z"),
        Arguments.of(
            "Berlin summer (CEST)",
            "Europe/Berlin",
            "2027-07-01T07:00:00",
            "2027-07-01T05:00:00.000Z"),
        // 02:00 CET jumps to 03:00 CEST: 02:30 does not exist, it moves forward by the gap to 03:30
        // CEST.
        Arguments.of(
            "Berlin spring forward gap",
            "Europe/Berlin",
            "2027-03-28T02:30:00",
            "2027-03-28T01:30:00.000Z"),
        // 03:00 CEST goes back to 02:00 CET: 02:30 happens twice, the earlier one (CEST) is taken.
        Arguments.of(
            "Berlin fall back overlap",
            "Europe/Berlin",
            "2027-10-31T02:30:00",
            "2027-10-31T00:30:00.000Z"),
        Arguments.of(
            "Berlin just after the overlap",
            "Europe/Berlin",
            "2027-10-31T03:00:00",
            "2027-10-31T02:00:00.000Z"),
        Arguments.of(
            "New York spring forward gap",
            "America/New_York",
            "2027-03-14T02:30:00",
            "2027-03-14T07:30:00.000Z"),
        Arguments.of(
            "New York fall back overlap",
            "America/New_York",
            "2027-11-07T01:30:00",
            "2027-11-07T05:30:00.000Z"),
        Arguments.of(
            "New York winter",
            "America/New_York",
            "2026-12-03T07:00:00",
            "2026-12-03T12:00:00.000Z"),
        Arguments.of("Etc/UTC", "Etc/UTC", "2026-12-03T07:00:00", "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "fraction and lower-case t",
            "Europe/Berlin",
            "2026-12-03t07:00:00.250",
            "2026-12-03T06:00:00.250Z"),
        // An offset keeps its instant, whatever the zone says.
        Arguments.of(
            "offset wins over the zone",
            "America/New_York",
            "2026-12-03T08:00:00+01:00",
            "2026-12-03T07:00:00.000Z"),
        Arguments.of(
            "Z wins over the zone",
            "Europe/Berlin",
            "2027-03-28T02:30:00Z",
            "2027-03-28T02:30:00.000Z"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("timeZones")
  void readsARunAtWithoutOffsetAsWallClockTimeInTheTimeZone(
      String name, String zone, String runAt, String expectedDue) {
    DelayedTask task =
        spec(
            s -> {
              s.setRunAt(runAt);
              s.setTimeZone(zone);
            });
    Validation validation = validator.validate(task);
    assertThat(validation).isInstanceOf(Validation.Valid.class);
    assertThat(Times.format(((Validation.Valid) validation).due())).isEqualTo(expectedDue);
  }

  @Test
  void delayIgnoresTheTimeZone() {
    DelayedTask task =
        spec(
            s -> {
              s.setDelay("10m");
              s.setTimeZone("America/New_York");
            });
    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-01T10:10:00Z")));
  }

  static Stream<Arguments> badTimeZones() {
    return Stream.of(
        Arguments.of("unknown zone", "Europe/Berlln", "2026-12-03T07:00:00"),
        Arguments.of(
            "unknown zone with a runAt offset", "Mars/Olympus_Mons", "2026-12-03T07:00:00Z"),
        Arguments.of("an offset is not a zone name", "+01:00", "2026-12-03T07:00:00"),
        Arguments.of("a prefixed offset is not a zone name", "UTC+1", "2026-12-03T07:00:00"),
        Arguments.of("empty", "", "2026-12-03T07:00:00"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badTimeZones")
  void refusesAnUnknownTimeZoneNamingTheFieldAndTheFix(String name, String zone, String runAt) {
    Validation validation =
        validator.validate(
            spec(
                s -> {
                  s.setRunAt(runAt);
                  s.setTimeZone(zone);
                }));
    assertThat(validation).isInstanceOf(Validation.Invalid.class);
    assertThat(((Validation.Invalid) validation).message())
        .contains("spec.timeZone '" + zone + "' is not a known IANA time zone", "Europe/Berlin");
  }

  @Test
  void anUnknownTimeZoneMakesEvenADelayTaskInvalid() {
    assertThat(
            validator.validate(
                spec(
                    s -> {
                      s.setDelay("10m");
                      s.setTimeZone("Europe/Berlln");
                    })))
        .isInstanceOf(Validation.Invalid.class);
  }

  @Test
  void aRunAtWithoutOffsetAndWithoutTimeZoneNamesBothFixes() {
    Validation validation = validator.validate(spec(s -> s.setRunAt("2026-12-03T07:00:00")));
    assertThat(validation).isInstanceOf(Validation.Invalid.class);
    assertThat(((Validation.Invalid) validation).message())
        .contains("spec.runAt '2026-12-03T07:00:00'", "add Z or an offset", "spec.timeZone");
  }

  @Test
  void aWallClockTimeThatIsNoRealDateIsRefused() {
    Validation validation =
        validator.validate(
            spec(
                s -> {
                  s.setRunAt("2027-02-30T07:00:00");
                  s.setTimeZone("Europe/Berlin");
                }));
    assertThat(validation).isInstanceOf(Validation.Invalid.class);
    assertThat(((Validation.Invalid) validation).message())
        .contains("spec.runAt '2027-02-30T07:00:00'", "not a real date");
  }

  @Test
  void refusesATaskWithoutSpec() {
    DelayedTask task = spec(s -> {});
    task.setSpec(null);
    assertThat(validator.validate(task)).isInstanceOf(Validation.Invalid.class);
  }

  @Test
  void dueTimeFormatAlwaysHasThreeFractionDigits() {
    assertThat(Times.format(Instant.parse("2026-12-03T07:00:00Z")))
        .isEqualTo("2026-12-03T07:00:00.000Z");
    assertThat(Times.format(Instant.parse("2026-12-03T07:00:00.1234Z")))
        .isEqualTo("2026-12-03T07:00:00.123Z");
  }

  private static JobTemplateSpec template(String namespace) {
    return new JobTemplateSpecBuilder()
        .withNewMetadata()
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withNewTemplate()
        .withNewSpec()
        .addNewContainer()
        .withName("c")
        .withImage("busybox")
        .endContainer()
        .withRestartPolicy("Never")
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /**
   * {@code keys} entries, each key {@code keyLength} characters long, each value {@code
   * valueLength}.
   */
  static Map<String, String> payload(int keys, int valueLength, int keyLength) {
    Map<String, String> payload = new java.util.HashMap<>();
    for (int i = 0; i < keys; i++) {
      String number = Integer.toString(i);
      payload.put("k".repeat(keyLength - number.length()) + number, "v".repeat(valueLength));
    }
    return payload;
  }

  private static DelayedTask spec(Consumer<DelayedTaskSpec> setter) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(
        new ObjectMetaBuilder()
            .withName("t")
            .withNamespace("tasks")
            .withUid("u-1")
            .withCreationTimestamp(CREATED)
            .build());
    DelayedTaskSpec spec = new DelayedTaskSpec();
    setter.accept(spec);
    task.setSpec(spec);
    return task;
  }

  // --- spec.sink and spec.delivery -------------------------------------------------------------

  static Stream<Arguments> invalidSinks() {
    return Stream.of(
        Arguments.of(
            "jobTemplate and sink",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setJobTemplate(template("tasks"));
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                }),
            "spec.jobTemplate and spec.sink are both set; keep at most one"),
        Arguments.of(
            "delivery without sink",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setDelivery(new DeliverySpec());
                }),
            "spec.delivery applies only to spec.sink"),
        Arguments.of(
            "sink without destination",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(new Destination());
                }),
            "spec.sink names no destination; set spec.sink.ref"),
        Arguments.of(
            "ref to a core kind other than Service",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "ConfigMap", "orders"));
                  s.setSink(sink);
                }),
            "spec.sink.ref is v1 ConfigMap; it must name a Service (apiVersion: v1, kind: Service) or a Knative "
                + "Addressable"),
        Arguments.of(
            "ref with an apiVersion that is no group/version",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("serving.knative.dev", "Service", "orders"));
                  s.setSink(sink);
                }),
            "spec.sink.ref is serving.knative.dev Service; it must name a Service"),
        Arguments.of(
            "ref.name not a DNS label",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "Service", "orders.payments"));
                  s.setSink(sink);
                }),
            "spec.sink.ref.name 'orders.payments' is not a DNS label"),
        Arguments.of(
            "ref.name with upper case",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "Service", "Orders"));
                  s.setSink(sink);
                }),
            "spec.sink.ref.name 'Orders' is not a DNS label"),
        Arguments.of(
            "ref.name longer than 63",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "Service", "a".repeat(64)));
                  s.setSink(sink);
                }),
            "is not a DNS label"),
        Arguments.of(
            "dead-letter ref.name not a DNS label",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  Destination dead = new Destination();
                  dead.setRef(new ServiceReference("v1", "Service", "../x"));
                  delivery.setDeadLetterSink(dead);
                  s.setDelivery(delivery);
                }),
            "spec.delivery.deadLetterSink.ref.name '../x' is not a DNS label"),
        Arguments.of(
            "absolute uri with ref",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "Service", "orders"));
                  sink.setUri("http://orders/cancel");
                  s.setSink(sink);
                }),
            "spec.sink.uri 'http://orders/cancel' must be a path such as /orders/cancel"),
        Arguments.of(
            "relative uri without ref",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("/orders/cancel"));
                }),
            "must be an absolute http:// or https:// URL"),
        Arguments.of(
            "uri outside the allowed prefixes",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://169.254.169.254/latest/meta-data"));
                }),
            "is not allowed: no entry of the operator's DELAYEDTASK_SINK_ALLOWED_URIS (http://127.0.0.1:8080/) allows "
                + "its scheme, host, port and path"),
        Arguments.of(
            "uri a string prefix would allow: another port",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8081/due"));
                }),
            "is not allowed: no entry of the operator's DELAYEDTASK_SINK_ALLOWED_URIS"),
        Arguments.of(
            "uri a string prefix would allow: userinfo",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(
                      uri("http://127.0.0.1:8080@payments.prod.svc.cluster.local:8080/refund"));
                }),
            "is not allowed: it has userinfo"),
        Arguments.of(
            "uri with a fragment",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due#x"));
                }),
            "is not allowed: it has a fragment"),
        Arguments.of(
            "audience over plain http to an absolute uri",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = uri("http://127.0.0.1:8080/due");
                  sink.setAudience("orders");
                  s.setSink(sink);
                }),
            "spec.sink.audience is set and spec.sink.uri 'http://127.0.0.1:8080/due' is plain http: a token is sent "
                + "only over https or to a Service of this namespace"),
        Arguments.of(
            "signing key that is no Secret key",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = uri("http://127.0.0.1:8080/due");
                  sink.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing("orders/key"));
                  s.setSink(sink);
                }),
            "spec.sink.signing.key 'orders/key' is not a Secret key; name a key of the signing Secret"),
        Arguments.of(
            "dead-letter signing without a key",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  Destination dead = uri("http://127.0.0.1:8080/dead");
                  dead.setSigning(new io.delayedtask.operator.api.v1alpha1.Signing());
                  delivery.setDeadLetterSink(dead);
                  s.setDelivery(delivery);
                }),
            "spec.delivery.deadLetterSink.signing.key is missing; name a key of the signing Secret"),
        Arguments.of(
            "caCerts without a certificate",
            spec(
                s -> {
                  s.setDelay("1m");
                  Destination sink = uri("http://127.0.0.1:8080/due");
                  sink.setCaCerts("not a certificate");
                  s.setSink(sink);
                }),
            "spec.sink.caCerts is not valid PEM (No certificate data found); give one or more PEM certificates"),
        Arguments.of(
            "caCerts that do not parse",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  Destination dead = uri("http://127.0.0.1:8080/dead");
                  dead.setCaCerts(
                      "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
                  delivery.setDeadLetterSink(dead);
                  s.setDelivery(delivery);
                }),
            "spec.delivery.deadLetterSink.caCerts is not valid PEM"),
        Arguments.of(
            "timeout above 5m",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setTimeout("6m");
                  s.setDelivery(delivery);
                }),
            "spec.delivery.timeout '6m' must be more than 0 and at most 5m"),
        Arguments.of(
            "retry above 100",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setRetry(101);
                  s.setDelivery(delivery);
                }),
            "spec.delivery.retry is 101; use 0 to 100"),
        Arguments.of(
            "bad backoffDelay",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setBackoffDelay("soon");
                  s.setDelivery(delivery);
                }),
            "spec.delivery.backoffDelay 'soon'"),
        Arguments.of(
            "backoffDelay 0s",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setBackoffDelay("0s");
                  s.setDelivery(delivery);
                }),
            "spec.delivery.backoffDelay '0s' is shorter than the minimum 100ms"),
        Arguments.of(
            "backoffDelay 99ms",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setBackoffDelay("99ms");
                  s.setDelivery(delivery);
                }),
            "spec.delivery.backoffDelay '99ms' is shorter than the minimum 100ms"),
        Arguments.of(
            "backoffDelay PT0.05S",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setBackoffDelay("PT0.05S");
                  s.setDelivery(delivery);
                }),
            "spec.delivery.backoffDelay 'PT0.05S' is shorter than the minimum 100ms"),
        Arguments.of(
            "dead-letter sink with audience",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setSink(uri("http://127.0.0.1:8080/due"));
                  DeliverySpec delivery = new DeliverySpec();
                  Destination dead = uri("http://127.0.0.1:8080/dead");
                  dead.setAudience("x");
                  delivery.setDeadLetterSink(dead);
                  s.setDelivery(delivery);
                }),
            "spec.delivery.deadLetterSink takes no audience"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidSinks")
  void refusesABadSinkNamingTheFieldAndTheFix(String name, DelayedTask task, String expected) {
    SpecValidator allowingOnePrefix =
        new SpecValidator(
            new SinkSpecRules(
                new SinkConfig(
                    List.of("http://127.0.0.1:8080/"),
                    "cluster.local",
                    "delayedtask-sender",
                    256,
                    32)));
    assertThat(allowingOnePrefix.validate(task))
        .isInstanceOfSatisfying(
            Validation.Invalid.class, invalid -> assertThat(invalid.message()).contains(expected));
  }

  @Test
  void acceptsAKnativeServiceAndABrokerAsRefs() {
    for (ServiceReference ref :
        List.of(
            new ServiceReference("serving.knative.dev/v1", "Service", "orders"),
            new ServiceReference("eventing.knative.dev/v1", "Broker", "default"),
            new ServiceReference("messaging.knative.dev/v1beta1", "InMemoryChannel", "orders"))) {
      DelayedTask task =
          spec(
              s -> {
                s.setDelay("1m");
                Destination sink = new Destination();
                sink.setRef(ref);
                sink.setUri("/orders");
                s.setSink(sink);
              });
      assertThat(new SpecValidator(SinkSpecRules.defaults()).validate(task))
          .as(ref.getApiVersion())
          .isInstanceOf(Validation.Valid.class);
    }
  }

  @Test
  void acceptsAServiceRefWithAPathAndAnAllowedUri() {
    SpecValidator allowing =
        new SpecValidator(
            new SinkSpecRules(
                new SinkConfig(
                    List.of("http://127.0.0.1:8080/"),
                    "cluster.local",
                    "delayedtask-sender",
                    256,
                    32)));
    DelayedTask byRef =
        spec(
            s -> {
              s.setDelay("1m");
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("v1", "Service", "orders"));
              sink.setUri("/orders/cancel?now=1");
              s.setSink(sink);
            });
    DelayedTask byUri =
        spec(
            s -> {
              s.setDelay("1m");
              s.setSink(uri("http://127.0.0.1:8080/due"));
            });
    assertThat(allowing.validate(byRef)).isInstanceOf(Validation.Valid.class);
    assertThat(allowing.validate(byUri)).isInstanceOf(Validation.Valid.class);
  }

  @Test
  void aNamespaceEntryAllowsAnAbsoluteUriOnlyForTheTasksOwnNamespaceAndAnAmbiguousPathIsNamed() {
    SpecValidator allowing =
        new SpecValidator(
            new SinkSpecRules(
                new SinkConfig(
                    List.of(
                        "https://{namespace}.hooks.example.com/",
                        "https://hooks.example.com/tenant-a/"),
                    "cluster.local",
                    "delayedtask-sender",
                    256,
                    32)));
    DelayedTask own =
        spec(
            s -> {
              s.setDelay("1m");
              s.setSink(uri("https://tasks.hooks.example.com/due"));
            });
    DelayedTask other =
        spec(
            s -> {
              s.setDelay("1m");
              s.setSink(uri("https://bank.hooks.example.com/due"));
            });
    DelayedTask ambiguous =
        spec(
            s -> {
              s.setDelay("1m");
              s.setSink(uri("https://hooks.example.com/tenant-a/..;/tenant-b/x"));
            });
    assertThat(allowing.validate(own)).isInstanceOf(Validation.Valid.class);
    assertThat(allowing.validate(other))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid -> assertThat(invalid.message()).contains(SinkConfig.ALLOWED_URIS));
    assertThat(allowing.validate(ambiguous))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid ->
                assertThat(invalid.message())
                    .contains("spec.sink.uri", "'..;' holds ';'", "another path"));
  }

  @Test
  void aRefToAKindThatIsNoAddressableIsInvalidAndAKindNotKnownYetIsAskedAgain() {
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<RefKinds.Verdict> answer =
        new java.util.concurrent.atomic.AtomicReference<>(new RefKinds.Verdict.NotKnownYet());
    RefKinds kinds =
        (namespace, apiVersion, kind) -> {
          asked.incrementAndGet();
          return "Broker".equals(kind)
              ? answer.get()
              : new RefKinds.Verdict.Refused("not addressable, the fix");
        };
    SpecValidator validator = new SpecValidator(new SinkSpecRules(SinkConfig.defaults(), kinds));
    DelayedTask job =
        spec(
            s -> {
              s.setDelay("1m");
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("batch/v1", "Job", "orders"));
              s.setSink(sink);
            });
    job.getMetadata().setGeneration(1L);
    assertThat(validator.validate(job))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid ->
                assertThat(invalid.message())
                    .isEqualTo("spec.sink.ref is batch/v1 Job: not addressable, the fix"));

    DelayedTask broker =
        spec(
            s -> {
              s.setDelay("1m");
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("eventing.knative.dev/v1", "Broker", "default"));
              s.setSink(sink);
            });
    broker.getMetadata().setUid("u-2");
    broker.getMetadata().setGeneration(1L);
    assertThat(validator.validate(broker))
        .as("not known yet: let through for now")
        .isInstanceOf(Validation.Valid.class);
    answer.set(new RefKinds.Verdict.Refused("no longer addressable"));
    assertThat(validator.validate(broker))
        .as("asked again, not remembered")
        .isInstanceOf(Validation.Invalid.class);
    DelayedTask service =
        spec(
            s -> {
              s.setDelay("1m");
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("v1", "Service", "orders"));
              s.setSink(sink);
            });
    service.getMetadata().setUid("u-3");
    int before = asked.get();
    assertThat(validator.validate(service)).isInstanceOf(Validation.Valid.class);
    assertThat(asked.get()).as("a v1 Service is not asked about").isEqualTo(before);
  }

  @Test
  void theRecordedDueTimeStandsWhileTheGenerationIsUnchanged() {
    DelayedTask task = spec(s -> s.setRunAt("2026-12-03T07:00:00Z"));
    task.getMetadata().setGeneration(2L);
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(Phase.Succeeded);
    status.setDueTime("2026-12-03T06:00:00.000Z"); // what an earlier version computed
    status.setObservedGeneration(2L);
    task.setStatus(status);

    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-03T06:00:00Z")));

    task.getMetadata().setGeneration(3L); // the spec changed: computed anew
    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-03T07:00:00Z")));
  }

  @Test
  void aSpecIsValidatedOncePerGeneration() {
    DelayedTask task = spec(s -> s.setRunAt("2026-12-03T07:00:00Z"));
    task.getMetadata().setGeneration(1L);
    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-03T07:00:00Z")));

    // Not a change the API server makes without a new generation: it shows the verdict is reused.
    task.getSpec().setRunAt("2026-12-03T08:00:00Z");
    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-03T07:00:00Z")));

    task.getMetadata().setGeneration(2L);
    assertThat(validator.validate(task))
        .isEqualTo(new Validation.Valid(Instant.parse("2026-12-03T08:00:00Z")));
  }

  @Test
  void theVerdictsOfTasksThatAreGoneAreForgotten() {
    DelayedTask kept = spec(s -> s.setRunAt("2026-12-03T07:00:00Z"));
    DelayedTask gone = spec(s -> s.setRunAt("2026-12-03T07:00:00Z"));
    gone.getMetadata().setUid("u-2");
    for (DelayedTask task : List.of(kept, gone)) {
      task.getMetadata().setGeneration(1L);
      validator.validate(task);
    }
    assertThat(validator.remembered()).isEqualTo(2);

    validator.retainOnly(List.of("u-1"));

    assertThat(validator.remembered()).isEqualTo(1);
  }

  // --- spec.data, spec.contentType, spec.ceOverrides ------------------------------------------

  private static DelayedTask sinkEvent(Consumer<DelayedTaskSpec> setter) {
    return spec(
        s -> {
          s.setDelay("1m");
          s.setSink(uri("http://127.0.0.1:8080/due"));
          setter.accept(s);
        });
  }

  static Stream<Arguments> invalidEvents() {
    return Stream.of(
        Arguments.of(
            "data without sink",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setData("{}");
                }),
            "spec.data is the body of a sink's request and applies only to spec.sink"),
        Arguments.of(
            "contentType without data",
            sinkEvent(s -> s.setContentType("text/plain")),
            "spec.contentType is the Content-Type of spec.data and applies only with spec.sink and spec.data"),
        Arguments.of(
            "contentType without sink",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setContentType("text/plain");
                }),
            "spec.contentType is the Content-Type of spec.data"),
        Arguments.of(
            "ceOverrides without sink",
            spec(
                s -> {
                  s.setDelay("1m");
                  s.setCeOverrides(new CeOverrides(Map.of("team", "orders")));
                }),
            "spec.ceOverrides adds CloudEvents attributes to a sink's request and applies only to spec.sink"),
        Arguments.of(
            "data that is not JSON under the default content type",
            sinkEvent(s -> s.setData("orderId=42")),
            "spec.data is not valid JSON, and spec.contentType is application/json (the default); fix spec.data"),
        Arguments.of(
            "data with trailing text under application/json",
            sinkEvent(
                s -> {
                  s.setData("{\"a\": 1} x");
                  s.setContentType("application/json");
                }),
            "spec.data is not valid JSON, and spec.contentType is application/json;"),
        Arguments.of(
            "data that is not JSON under a +json type",
            sinkEvent(
                s -> {
                  s.setData("<order/>");
                  s.setContentType("application/cloudevents+json; charset=utf-8");
                }),
            "spec.data is not valid JSON, and spec.contentType is application/cloudevents+json; charset=utf-8"),
        Arguments.of(
            "empty data under JSON", sinkEvent(s -> s.setData("")), "spec.data is not valid JSON"),
        Arguments.of(
            "data too long",
            sinkEvent(
                s -> {
                  s.setData("x".repeat(65_537));
                  s.setContentType("text/plain");
                }),
            "spec.data has 65537 characters; at most 65536"),
        Arguments.of(
            "contentType not a media type",
            sinkEvent(
                s -> {
                  s.setData("x");
                  s.setContentType("plain text");
                }),
            "spec.contentType 'plain text' must be a media type such as application/json"),
        Arguments.of(
            "extension name with capitals",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("Team", "a")))),
            "spec.ceOverrides.extensions name 'Team' must be 1 to 20 lowercase letters or digits"),
        Arguments.of(
            "extension name too long",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("a".repeat(21), "a")))),
            "must be 1 to 20 lowercase letters or digits"),
        Arguments.of(
            "extension named like an attribute",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("type", "a")))),
            "spec.ceOverrides.extensions.type: type is a CloudEvents attribute"),
        Arguments.of(
            "extension named datacontenttype",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("datacontenttype", "a")))),
            "datacontenttype is a CloudEvents attribute"),
        Arguments.of(
            "extension in the operator's prefix",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("delayedtaskattempt", "9")))),
            "spec.ceOverrides.extensions.delayedtaskattempt: names beginning with delayedtask are the operator's own"),
        Arguments.of(
            "extension value too long",
            sinkEvent(s -> s.setCeOverrides(new CeOverrides(Map.of("team", "x".repeat(257))))),
            "spec.ceOverrides.extensions.team has 257 characters; a value is at most 256"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidEvents")
  void refusesBadDataContentTypeAndOverridesNamingTheField(
      String name, DelayedTask task, String expected) {
    SpecValidator allowingOnePrefix =
        new SpecValidator(
            new SinkSpecRules(
                new SinkConfig(
                    List.of("http://127.0.0.1:8080/"),
                    "cluster.local",
                    "delayedtask-sender",
                    256,
                    32)));
    assertThat(allowingOnePrefix.validate(task))
        .isInstanceOfSatisfying(
            Validation.Invalid.class, invalid -> assertThat(invalid.message()).contains(expected));
  }

  static Stream<Arguments> validEvents() {
    return Stream.of(
        Arguments.of(
            "a JSON object under the default type",
            sinkEvent(s -> s.setData("{\"orderId\": 42, \"items\": [1, 2]}"))),
        Arguments.of("a JSON array", sinkEvent(s -> s.setData("[1, {\"a\": null}]"))),
        Arguments.of(
            "a JSON string under a +json type",
            sinkEvent(
                s -> {
                  s.setData("\"due\"");
                  s.setContentType("application/vnd.orders+json");
                })),
        Arguments.of(
            "XML",
            sinkEvent(
                s -> {
                  s.setData("<order id=\"42\"/>");
                  s.setContentType("application/xml");
                })),
        Arguments.of(
            "plain text with a charset",
            sinkEvent(
                s -> {
                  s.setData("cancel order 42");
                  s.setContentType("text/plain; charset=utf-8");
                })),
        Arguments.of(
            "the longest data",
            sinkEvent(
                s -> {
                  s.setData("x".repeat(65_536));
                  s.setContentType("text/plain");
                })),
        Arguments.of(
            "extensions at their limits",
            sinkEvent(
                s ->
                    s.setCeOverrides(
                        new CeOverrides(
                            Map.of(
                                "team",
                                "orders",
                                "a".repeat(20),
                                "x".repeat(256),
                                "region2",
                                ""))))),
        Arguments.of("an empty ceOverrides", sinkEvent(s -> s.setCeOverrides(new CeOverrides()))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("validEvents")
  void acceptsDataContentTypesAndOverridesWithinTheRules(String name, DelayedTask task) {
    SpecValidator allowingOnePrefix =
        new SpecValidator(
            new SinkSpecRules(
                new SinkConfig(
                    List.of("http://127.0.0.1:8080/"),
                    "cluster.local",
                    "delayedtask-sender",
                    256,
                    32)));
    assertThat(allowingOnePrefix.validate(task)).isInstanceOf(Validation.Valid.class);
  }

  private static Destination uri(String uri) {
    Destination destination = new Destination();
    destination.setUri(uri);
    return destination;
  }
}
