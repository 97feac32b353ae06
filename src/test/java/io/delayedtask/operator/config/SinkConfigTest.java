package io.delayedtask.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SinkConfigTest {

  @Test
  void defaults() {
    SinkConfig config = SinkConfig.fromEnvironment(Map.of());
    assertThat(config).isEqualTo(SinkConfig.defaults());
    assertThat(config.allowedUris()).isEmpty();
    assertThat(config.clusterDomain()).isEqualTo("cluster.local");
    assertThat(config.serviceAccount()).isEqualTo("delayedtask-sender");
    assertThat(config.maxInFlight()).isEqualTo(256);
    assertThat(config.maxInFlightPerHost()).isEqualTo(32);
    assertThat(config.allows("https://hooks.example.com/x")).isFalse();
  }

  @Test
  void blankValuesMeanTheDefaults() {
    assertThat(
            SinkConfig.fromEnvironment(
                Map.of(
                    SinkConfig.ALLOWED_URIS,
                    " ",
                    SinkConfig.CLUSTER_DOMAIN,
                    "",
                    SinkConfig.MAX_IN_FLIGHT,
                    " ")))
        .isEqualTo(SinkConfig.defaults());
  }

  @Test
  void everyVariableSet() {
    SinkConfig config =
        SinkConfig.fromEnvironment(
            Map.of(
                SinkConfig.ALLOWED_URIS, "https://hooks.example.com/, http://127.0.0.1:8080,",
                SinkConfig.CLUSTER_DOMAIN, "corp.example",
                SinkConfig.SERVICE_ACCOUNT, "task-sender",
                SinkConfig.MAX_IN_FLIGHT, "1000",
                SinkConfig.MAX_IN_FLIGHT_PER_HOST, "4",
                SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE, "8"));
    assertThat(config)
        .isEqualTo(
            new SinkConfig(
                List.of("https://hooks.example.com/", "http://127.0.0.1:8080"),
                "corp.example",
                "task-sender",
                1000,
                4,
                8));
    assertThat(config.allows("https://hooks.example.com/orders?x=1")).isTrue();
    assertThat(config.allows("http://127.0.0.1:8080/")).isTrue();
    assertThat(config.allows("https://hooks.example.org/")).isFalse();
    assertThat(config.allows("http://127.0.0.1:8081/")).as("another port").isFalse();
  }

  @ParameterizedTest(name = "{0}={1}")
  @MethodSource("badValues")
  void aBadValueNamesTheVariableAndWhatItAccepts(String variable, String value, String accepts) {
    assertThatThrownBy(() -> SinkConfig.fromEnvironment(Map.of(variable, value)))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(variable)
        .hasMessageContaining(accepts);
  }

  static Stream<Arguments> badValues() {
    return Stream.of(
        Arguments.of(
            SinkConfig.ALLOWED_URIS, "hooks.example.com/", "absolute http:// or https:// URL"),
        Arguments.of(
            SinkConfig.ALLOWED_URIS,
            "ftp://files.example.com/",
            "absolute http:// or https:// URL"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "https://", "absolute http:// or https:// URL"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "https://ok.example/,/relative", "'/relative'"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "https://user@hooks.example.com/", "userinfo"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "https://hooks.example.com/#x", "fragment"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "http://127.0.0.1:", "names no port"),
        Arguments.of(SinkConfig.ALLOWED_URIS, "http://bad host/", "absolute http:// or https://"),
        Arguments.of(SinkConfig.CLUSTER_DOMAIN, "Cluster.Local", "DNS subdomain"),
        Arguments.of(SinkConfig.CLUSTER_DOMAIN, "cluster.local.", "DNS subdomain"),
        Arguments.of(SinkConfig.SERVICE_ACCOUNT, "sender_1", "DNS subdomain"),
        Arguments.of(SinkConfig.SERVICE_ACCOUNT, "-sender", "DNS subdomain"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT, "0", "whole number from 1"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT, "-3", "whole number from 1"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT, "lots", "whole number from 1"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT_PER_HOST, "0", "whole number from 1"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT_PER_HOST, "99999999999", "whole number from 1"),
        Arguments.of(SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE, "0", "whole number from 1"));
  }

  @Test
  void aNamespacePlaceholderThatIsNotAWholeLabelOrSegmentStopsTheOperatorNamingTheVariable() {
    assertThatThrownBy(
            () ->
                SinkConfig.fromEnvironment(
                    Map.of(
                        SinkConfig.ALLOWED_URIS,
                        "https://hooks.example.com/,https://x{namespace}.hooks.example.com/")))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(SinkConfig.ALLOWED_URIS)
        .hasMessageContaining("whole host label")
        .hasMessageNotContaining("\n");
    SinkConfig config =
        SinkConfig.fromEnvironment(
            Map.of(
                SinkConfig.ALLOWED_URIS,
                "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/"));
    assertThat(
            config.allows(
                "http://broker-ingress.knative-eventing.svc.cluster.local/shop/default", "shop"))
        .isTrue();
    assertThat(
            config.allows(
                "http://broker-ingress.knative-eventing.svc.cluster.local/shop/default", "bank"))
        .isFalse();
  }
}
