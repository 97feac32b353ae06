package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delayedtask.operator.testing.TestResolver;
import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Only parses IP literals: no lookup, no packet. */
class AddressGuardTest {

  @ParameterizedTest(name = "{0} (loopback allowed: {1}) -> {2}")
  @CsvSource(
      delimiter = '|',
      nullValues = "ALLOWED",
      value = {
        // link-local and cloud metadata
        "169.254.169.254              | true  | 169.254.169.254 is link-local (cloud metadata)",
        "169.254.0.1                  | true  | 169.254.0.1 is link-local",
        "169.254.255.255              | true  | 169.254.255.255 is link-local",
        "fe80::1                      | true  | fe80::1 is link-local",
        "febf:ffff::1                 | true  | febf:ffff::1 is link-local",
        "fd00:ec2::254                | true  | fd00:ec2::254 is a cloud metadata endpoint",
        "100.100.100.200              | true  | 100.100.100.200 is a cloud metadata endpoint",
        "fd00:ec2::23                 | true  | fd00:ec2::23 is a cloud metadata endpoint",
        "fd00:ec2:0:0:0:0:0:23        | true  | fd00:ec2::23 is a cloud metadata endpoint",
        "168.63.129.16                | true  | 168.63.129.16 is a cloud metadata endpoint",
        // unspecified
        "0.0.0.0                      | true  | 0.0.0.0 is unspecified",
        "0.1.2.3                      | true  | 0.1.2.3 is unspecified",
        "::                           | true  | :: is unspecified",
        // IPv4 inside IPv6: judged as the IPv4 address, shown as written
        "::a9fe:a9fe                  | true  | ::a9fe:a9fe is link-local (cloud metadata)",
        "::ffff:0:0                   | true  | 0.0.0.0 is unspecified",
        "::6464:64c8                  | true  | ::6464:64c8 is a cloud metadata endpoint",
        // NAT64 (64:ff9b::/96, the IPv4 address in the last 32 bits) and 6to4 (2002::/16, in bits
        // 16-47)
        "64:ff9b::a9fe:a9fe           | true  | 64:ff9b::a9fe:a9fe is link-local (cloud metadata)",
        "64:ff9b::169.254.169.254     | true  | 64:ff9b::a9fe:a9fe is link-local (cloud metadata)",
        "64:ff9b::a9fe:1              | true  | 64:ff9b::a9fe:1 is link-local",
        "64:ff9b::6464:64c8           | true  | 64:ff9b::6464:64c8 is a cloud metadata endpoint",
        "64:ff9b::                    | true  | 64:ff9b:: is unspecified",
        "64:ff9b::7f00:1              | false | 64:ff9b::7f00:1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "2002:a9fe:a9fe::             | true  | 2002:a9fe:a9fe:: is link-local (cloud metadata)",
        "2002:a9fe:a9fe:1::5          | true  | 2002:a9fe:a9fe:1::5 is link-local (cloud metadata)",
        "2002:a9fe:1::                | true  | 2002:a9fe:1:: is link-local",
        "2002:6464:64c8::             | true  | 2002:6464:64c8:: is a cloud metadata endpoint",
        "2002::                       | true  | 2002:: is unspecified",
        "2002::1                      | true  | 2002::1 is unspecified",
        // NAT64's local-use prefix (64:ff9b:1::/48, RFC 8215): the IPv4 address wherever a prefix
        // length puts it
        "64:ff9b:1::a9fe:a9fe         | true  | 64:ff9b:1::a9fe:a9fe is link-local (cloud metadata)",
        "64:ff9b:1:a9fe:a9:fe00::     | true  | 64:ff9b:1:a9fe:a9:fe00:: is link-local (cloud metadata)",
        "64:ff9b:1:0:a9:fea9:fe00:0   | true  | 64:ff9b:1:0:a9:fea9:fe00:0 is link-local (cloud metadata)",
        "64:ff9b:1::a83f:8110         | true  | 64:ff9b:1::a83f:8110 is a cloud metadata endpoint",
        "64:ff9b:1::7f00:1            | false | 64:ff9b:1::7f00:1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "64:ff9b:1::                  | true  | 64:ff9b:1:: is unspecified",
        // SIIT's IPv4-translated form (::ffff:0:a.b.c.d, RFC 2765)
        "::ffff:0:a9fe:a9fe           | true  | ::ffff:0:a9fe:a9fe is link-local (cloud metadata)",
        "::ffff:0:7f00:1              | false | ::ffff:0:7f00:1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        // Teredo (2001::/32, RFC 4380): the server's IPv4 address in bits 32-63, the client's
        // inverted in the last 32
        "2001:0:4136:e378:8000:63bf:5601:5601 | true | 2001:0:4136:e378:8000:63bf:5601:5601 is link-local (cloud metadata)",
        "2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2 | true | 2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2 is link-local (cloud metadata)",
        "2001:0:4136:e378:8000:63bf:80ff:fffe | false | 2001:0:4136:e378:8000:63bf:80ff:fffe is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2 | false | ALLOWED",
        "::7f00:1                     | false | ::7f00:1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        // loopback only when allowed
        "127.0.0.1                    | false | 127.0.0.1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "127.255.0.9                  | false | 127.255.0.9 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "::1                          | false | ::1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL",
        "127.0.0.1                    | true  | ALLOWED",
        "::1                          | true  | ALLOWED",
        // ordinary addresses
        "10.96.0.10                   | false | ALLOWED",
        "192.168.1.20                 | false | ALLOWED",
        "169.253.255.255              | false | ALLOWED",
        "169.255.0.1                  | false | ALLOWED",
        "100.100.100.201              | false | ALLOWED",
        "fec0::1                      | false | ALLOWED",
        "fd00:ec2::253                | false | ALLOWED",
        "fd00:ec2::24                 | false | ALLOWED",
        "64:ff9b::a00:1               | false | ALLOWED",
        "64:ff9c::a9fe:a9fe           | false | ALLOWED",
        "64:ff9b:1::a00:1             | false | ALLOWED",
        "64:ff9b:2::a9fe:a9fe         | false | ALLOWED",
        "2002:c000:201::              | false | ALLOWED",
        "2003:a9fe:a9fe::             | false | ALLOWED",
        "2001:db8::1                  | false | ALLOWED",
        "::2                          | false | ALLOWED"
      })
  void judgesAddresses(String literal, boolean loopbackAllowed, String rule) throws Exception {
    InetAddress address = InetAddress.getByName(literal); // a literal: parsed, never looked up
    assertThat(AddressGuard.forbidden(address, loopbackAllowed).orElse(null)).isEqualTo(rule);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"::ffff:169.254.169.254", "::ffff:127.0.0.1", "::ffff:0.0.0.0"})
  void ipv4MappedLiteralsAreJudgedAsTheirIpv4Address(String literal) throws Exception {
    // Java already turns ::ffff:a.b.c.d into the IPv4 address; whatever the form, it is refused.
    assertThat(AddressGuard.forbidden(InetAddress.getByName(literal), false)).isPresent();
  }

  /**
   * The same forms through a name (the test resolver: no lookup): the guarded lookup drops them
   * all.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "fd00:ec2::23",
    "64:ff9b::a9fe:a9fe",
    "2002:a9fe:a9fe::",
    "64:ff9b::",
    "2002:a9fe:1::"
  })
  void aNameResolvingToAnEmbeddedMetadataOrLinkLocalAddressIsRefused(String literal) {
    NameResolver resolver = host -> List.of(InetAddress.getByName(literal));
    GuardedDns dns =
        new GuardedDns(resolver, new Reach.ByName(Optional.empty(), true, true), "cluster.local");
    assertThatThrownBy(() -> dns.lookup("embedded.test"))
        .isInstanceOf(ForbiddenAddressException.class);
  }

  /**
   * Through the in-process operators' resolver (names ending in .test, no lookup): each lookup is
   * refused.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        TestResolver.WIRESERVER + " | 168.63.129.16 is a cloud metadata endpoint",
        TestResolver.NAT64_LOCAL + " | 64:ff9b:1::a9fe:a9fe is link-local (cloud metadata)",
        TestResolver.SIIT + " | ::ffff:0:a9fe:a9fe is link-local (cloud metadata)",
        TestResolver.TEREDO
            + " | 2001:0:4136:e378:8000:63bf:5601:5601 is link-local (cloud metadata)"
      })
  void metadataBehindLessCommonFormsIsRefusedAtLookup(String name, String rule) {
    GuardedDns dns =
        new GuardedDns(
            new TestResolver(), new Reach.ByName(Optional.empty(), true, true), "cluster.local");
    assertThatThrownBy(() -> dns.lookup(name))
        .isInstanceOfSatisfying(
            ForbiddenAddressException.class, refused -> assertThat(refused.rule()).isEqualTo(rule));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "fe80:0:0:0:0:0:0:1, fe80::1",
    "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
    "0:0:0:0:0:0:0:0, ::",
    "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1"
  })
  void showsIpv6AsPeopleWriteIt(String literal, String shown) throws Exception {
    assertThat(AddressGuard.text(InetAddress.getByName(literal))).isEqualTo(shown);
  }
}
