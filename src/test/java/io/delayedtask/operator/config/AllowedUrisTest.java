package io.delayedtask.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The allowlist compares parsed parts, never strings: every bypass of the old {@code startsWith}
 * (issue 23) and its look-alikes, one row each.
 */
class AllowedUrisTest {

  @ParameterizedTest(name = "{0} allows {1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // userinfo: the host is after the '@'
        "http://127.0.0.1:8080                | http://127.0.0.1:@payments.prod.svc.cluster.local:8080/refund | false",
        "http://127.0.0.1:8080                | http://127.0.0.1:8080@payments.prod.svc.cluster.local:8080/x  | false",
        "https://hooks.example.com            | https://hooks.example.com@10.1.2.3/                            | false",
        "https://hooks.example.com            | https://hooks.example.com:443@10.1.2.3/                        | false",
        "https://hooks.example.com            | https://user@hooks.example.com/                                | false",
        "https://hooks.example.com            | https://@hooks.example.com/                                    | false",
        // a longer host is another host
        "https://hooks.example.com            | https://hooks.example.com.evil.io/                             | false",
        "https://hooks.example.com/           | https://hooks.example.com.evil.io/                             | false",
        "https://hooks.example.com            | https://evilhooks.example.com/                                 | false",
        "https://hooks.example.com            | https://hooks.example.com/                                     | true",
        "https://hooks.example.com            | https://hooks.example.com                                      | true",
        "https://hooks.example.com            | https://hooks.example.com/any/path?q=1                         | true",
        // a backslash ends the authority as OkHttp sends it: the host stays hooks.example.com
        "https://hooks.example.com/acme/      | https://hooks.example.com\\@evil.io/                           | false",
        // case and trailing dots in hosts
        "https://hooks.example.com/acme       | HTTPS://HOOKS.Example.COM/acme                                 | true",
        "https://hooks.example.com/acme       | https://hooks.example.com./acme                                | true",
        "https://hooks.example.com./acme      | https://hooks.example.com/acme                                 | true",
        "https://hooks.example.com/acme       | https://hooks.example.com/ACME                                 | false",
        // ports: equal, or the scheme's default on both sides
        "http://h:80                          | http://h:8080/                                                 | false",
        "http://h:80                          | http://h/                                                      | true",
        "http://h                             | http://h:80/x                                                  | true",
        "http://h                             | http://h:8080/x                                                | false",
        "https://h                            | https://h:443/x                                                | true",
        "https://h                            | http://h:443/x                                                 | false",
        "http://h                             | https://h/x                                                    | false",
        "http://127.0.0.1:8099                | http://127.0.0.1:8099/x                                        | true",
        "http://127.0.0.1:8099                | http://127.0.0.1:80990/x                                       | false",
        "http://127.0.0.1:8099                | http://127.0.0.1:809/x                                         | false",
        "http://127.0.0.1:8099                | http://127.0.0.1/x                                             | false",
        // dot segments, plain and percent-encoded
        "https://h/tenant-a/                  | https://h/tenant-a/../tenant-b/                                | false",
        "https://h/tenant-a/                  | https://h/tenant-a/%2e%2e/tenant-b/                            | false",
        "https://h/tenant-a/                  | https://h/tenant-a/%2E%2E/tenant-b/                            | false",
        "https://h/tenant-a/                  | https://h/tenant-a/.%2e/tenant-b/                              | false",
        "https://h/tenant-a/                  | https://h/tenant-a/./x/../y                                    | true",
        "https://h/tenant-a/                  | https://h/tenant-b/../tenant-a/x                               | true",
        "https://h/tenant-a/                  | https://h/tenant-a/x/../..                                     | false",
        "https://h/tenant-a/                  | https://h/tenant-a%2F..%2Ftenant-b/                            | false",
        // percent-encoded unreserved characters are what the receiver sees
        "https://h/acme/                      | https://h/%61cme/x                                             | true",
        "https://h/acme/                      | https://h/ac%6De/x                                             | true",
        "https://h/a%7Eb/                     | https://h/a~b/x                                                | true",
        // an entry path not ending in '/': itself, and continuations after a '/'
        "https://hooks.example.com/acme       | https://hooks.example.com/acme                                 | true",
        "https://hooks.example.com/acme       | https://hooks.example.com/acme/                                | true",
        "https://hooks.example.com/acme       | https://hooks.example.com/acme/x                               | true",
        "https://hooks.example.com/acme       | https://hooks.example.com/acme?x=1                             | true",
        "https://hooks.example.com/acme       | https://hooks.example.com/acmex                                | false",
        "https://hooks.example.com/acme       | https://hooks.example.com/acme/../admin                        | false",
        "https://hooks.example.com/acme       | https://hooks.example.com/acme/%2e%2e/admin                    | false",
        "https://hooks.example.com/acme       | https://hooks.example.com:8443/acme                            | false",
        "https://hooks.example.com/acme       | https://hooks.example.com/                                     | false",
        // an entry path ending in '/': the paths that begin with it
        "https://hooks.example.com/acme/      | https://hooks.example.com/acme                                 | false",
        "https://hooks.example.com/acme/      | https://hooks.example.com/acme/                                | true",
        "https://hooks.example.com/acme/      | https://hooks.example.com/acme/x/y                             | true",
        "https://hooks.example.com/acme/      | https://hooks.example.com/acmex/                               | false",
        // '/' or no path: the whole origin
        "https://hooks.example.com/           | https://hooks.example.com/x/y                                  | true",
        // fragments are never allowed
        "https://hooks.example.com/           | https://hooks.example.com/x#frag                               | false",
        "https://hooks.example.com/           | https://hooks.example.com/x#                                   | false",
        // IPv6 literals, compared as addresses
        "http://[::1]:8099                    | http://[0:0:0:0:0:0:0:1]:8099/x                                | true",
        "http://[::1]:8099                    | http://[::2]:8099/x                                            | false",
        "http://[fd00::1]/                    | http://[FD00:0::1]/x                                           | true",
        "http://[::1]:8099                    | http://[::ffff:127.0.0.1]:8099/x                               | false",
        // IPv4 written otherwise is another host (never equal by string tricks)
        "http://127.0.0.1:8099                | http://127.1:8099/x                                            | false",
        "http://127.0.0.1:8099                | http://2130706433:8099/x                                       | false",
        // not http(s)
        "http://h/                            | ftp://h/x                                                      | false",
        "http://h/                            | //h/x                                                          | false"
      })
  void anEntryAllowsAUrlByItsParsedParts(String entry, String url, boolean allowed) {
    assertThat(AllowedUris.of(List.of(entry)).entryAllowing(url).isPresent())
        .as(entry + " allows " + url)
        .isEqualTo(allowed);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "https://user@hooks.example.com/  | userinfo",
        "https://@hooks.example.com/      | userinfo",
        "https://hooks.example.com/#x     | fragment",
        "https://hooks.example.com/?a=b   | query",
        "http://127.0.0.1:                | names no port",
        "hooks.example.com/               | not an absolute http",
        "ftp://files.example.com/         | not an absolute http",
        "https://                         | not an absolute http",
        "http://bad host/                 | not an absolute http"
      })
  void aBadEntryIsRefusedWithWhy(String entry, String why) {
    assertThatThrownBy(() -> AllowedUris.of(List.of(entry)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + entry + "'")
        .hasMessageContaining(why);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "http://127.0.0.1:8099       | true",
        "http://127.3.4.5/           | true",
        "http://localhost:8080/      | true",
        "HTTP://LocalHost/           | true",
        "http://localhost./          | true",
        "http://[::1]:9000/          | true",
        "http://[0:0:0:0:0:0:0:1]/   | true",
        "http://localhost.example.com/ | false",
        "http://127.0.0.1.example.com/ | false",
        "http://[::2]/               | false",
        "https://hooks.example.com/  | false"
      })
  void anEntryNamesLoopbackByItsHost(String entry, boolean loopback) {
    assertThat(AllowedUris.of(List.of(entry)).entries().get(0).namesLoopback()).isEqualTo(loopback);
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "https://hooks.example.com/,http://127.0.0.1:8099 | http://127.0.0.1:8099/x | http://127.0.0.1:8099",
        "https://hooks.example.com/,http://127.0.0.1:8099 | https://hooks.example.com/x | https://hooks.example.com/"
      })
  void theEntryThatAllowsIsTheOneNamed(String entries, String url, String entry) {
    assertThat(AllowedUris.of(List.of(entries.split(","))).entryAllowing(url))
        .hasValueSatisfying(found -> assertThat(found.text()).isEqualTo(entry));
  }

  @ParameterizedTest(name = "{0} allows {1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // a segment holding ';': Tomcat and Spring read "..;" as ".."
        "https://h/tenant-a/                  | https://h/tenant-a/..;/tenant-b/x                              | false",
        "https://h/tenant-a/                  | https://h/tenant-a/x;jsessionid=1                              | false",
        "https://h/tenant-a/                  | https://h/tenant-a/x%3Bjsessionid=1                            | false",
        // an encoded '/', '\', '.' or '%': a proxy decoding first (nginx) sees other segments
        "https://h/tenant-a/                  | https://h/tenant-a/..%2Ftenant-b                               | false",
        "https://h/tenant-a/                  | https://h/tenant-a/..%2ftenant-b                               | false",
        "https://h/tenant-a/                  | https://h/tenant-a/..%5Ctenant-b                               | false",
        "https://h/tenant-a/                  | https://h/tenant-a/..%5ctenant-b                               | false",
        "https://h/tenant-a/                  | https://h/tenant-a/%252e%252e/tenant-b                         | false",
        "https://h/tenant-a/                  | https://h/tenant-a/x%2ey                                       | false",
        // a plain backslash is a '/' as OkHttp sends it: dot segments then removed as usual
        "https://h/tenant-a/                  | https://h/tenant-a\\..\\tenant-b/x                             | false",
        // plain paths still pass, and an entry for the whole origin does not restrict the path
        "https://h/tenant-a/                  | https://h/tenant-a/x%20y?a=%2F                                 | true",
        "https://h/                           | https://h/tenant-a/..;/x                                       | true",
        "https://h                            | https://h/a%2Fb                                                | true"
      })
  void aPathAReceiverCouldReadAsAnotherIsRefusedWhereAnEntryRestrictsThePath(
      String entry, String url, boolean allowed) {
    assertThat(AllowedUris.of(List.of(entry)).entryAllowing(url).isPresent())
        .as(entry + " allows " + url)
        .isEqualTo(allowed);
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "https://h/tenant-a/x;y          | ';'",
        "https://h/tenant-a/..%2Ftenant-b | '/' (%2F)",
        "https://h/tenant-a/%5C          | (%5C)",
        "https://h/tenant-a/%252e        | '%' (%25)"
      })
  void theRefusalOfAnAmbiguousPathSaysWhy(String url, String why) {
    assertThat(AllowedUris.of(List.of("https://h/tenant-a/")).whyRefused(url, "ns"))
        .hasValueSatisfying(message -> assertThat(message).contains(why).contains("another path"));
    assertThat(AllowedUris.of(List.of("https://other/tenant-a/")).whyRefused(url, "ns"))
        .as("no entry of its origin")
        .isEmpty();
  }

  @ParameterizedTest(name = "{0} for namespace {2} allows {1}: {3}")
  @CsvSource(
      delimiter = '|',
      value = {
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shop/default | shop | true",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/bank/default | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shop/../bank/default | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shop/..;/bank/default | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shop%2F..%2Fbank/x | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shopx/default | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/shop | shop | false",
        "http://broker-ingress.knative-eventing.svc.cluster.local/{namespace}/ | http://broker-ingress.knative-eventing.svc.cluster.local/_namespace_/x | shop | false",
        "https://{namespace}.hooks.example.com/                                | https://shop.hooks.example.com/x | shop | true",
        "https://{namespace}.hooks.example.com/                                | https://SHOP.hooks.example.com/x | shop | true",
        "https://{namespace}.hooks.example.com/                                | https://bank.hooks.example.com/x | shop | false",
        "https://{namespace}.hooks.example.com/                                | https://shop.bank.hooks.example.com/x | shop | false",
        "https://{namespace}.hooks.example.com/                                | https://hooks.example.com/x | shop | false",
        "https://{namespace}.hooks.example.com/{namespace}                     | https://shop.hooks.example.com/shop/x | shop | true",
        "https://{namespace}.hooks.example.com/{namespace}                     | https://shop.hooks.example.com/bank/x | shop | false"
      })
  void aNamespaceEntryAllowsOnlyTheTasksOwnNamespaceThere(
      String entry, String url, String namespace, boolean allowed) {
    AllowedUris allowlist = AllowedUris.of(List.of(entry));
    assertThat(allowlist.entryAllowing(url, namespace).isPresent())
        .as(entry + " allows " + url + " for " + namespace)
        .isEqualTo(allowed);
    assertThat(allowlist.entryAllowing(url)).as("without a namespace, never").isEmpty();
    assertThat(allowlist.entries().get(0).perNamespace()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "https://x{namespace}.hooks.example.com/      | whole host label",
        "https://{namespace}x.hooks.example.com/      | whole host label",
        "https://hooks.example.com/pre-{namespace}/   | whole path segment",
        "https://hooks.example.com/{namespace}x       | whole path segment",
        "https://hooks.example.com:{namespace}/       | whole host label",
        "https://hooks.example.com/?ns={namespace}    | whole path segment",
        "https://hooks.example.com/{ns}/              | the only placeholder",
        "https://hooks.example.com/{Namespace}/       | the only placeholder"
      })
  void aNamespacePlaceholderThatIsNotAWholeLabelOrSegmentIsRefusedWithWhy(
      String entry, String why) {
    assertThatThrownBy(() -> AllowedUris.of(List.of(entry)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + entry + "'")
        .hasMessageContaining(why);
  }
}
