package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which addresses a delivery may never reach, whatever name led there (docs/reference.md:
 * link-local, cloud metadata endpoints and unspecified addresses always; loopback unless the
 * allowlist entry that allowed the URL names that loopback host). IPv4 addresses hidden in IPv6 are
 * judged as the IPv4 address they carry, since that is where the packet ends up: IPv4-mapped
 * ({@code ::ffff:169.254.169.254}) and -compatible ({@code ::169.254.169.254}), which the kernel
 * connects to as IPv4, NAT64 ({@code 64:ff9b::a9fe:a9fe}, RFC 6052), which a NAT64 gateway
 * translates, its local-use prefix ({@code 64:ff9b:1::/48}, RFC 8215, where the IPv4 address sits
 * where the gateway's prefix length puts it: every place RFC 6052 allows is judged), SIIT's
 * IPv4-translated form ({@code ::ffff:0:a9fe:a9fe}, RFC 2765), 6to4 ({@code 2002:a9fe:a9fe::}, RFC
 * 3056), which a 6to4 relay tunnels there, and Teredo ({@code 2001::/32}, RFC 4380: the server's
 * address, and the client's, stored inverted), which a Teredo relay tunnels to. An address is
 * refused when any IPv4 address it may carry is.
 */
public final class AddressGuard {
  /**
   * Metadata services that are not link-local: AWS's IPv6 endpoints (instance metadata, and the
   * Amazon Time Sync/DNS-adjacent fd00:ec2::23), Alibaba Cloud's, and Azure's WireServer
   * (168.63.129.16: the VM agent's configuration, certificates and health channel).
   */
  private static final Set<String> METADATA_ELSEWHERE =
      Set.of("fd00:ec2::254", "fd00:ec2::23", "100.100.100.200", "168.63.129.16");

  private static final String METADATA_LINK_LOCAL = "169.254.169.254";

  private AddressGuard() {}

  /**
   * The rule {@code address} breaks, as a sentence ("169.254.169.254 is link-local (cloud
   * metadata)"), or empty when a delivery may connect to it.
   */
  public static Optional<String> forbidden(InetAddress address, boolean loopbackAllowed) {
    String shown = text(address);
    List<InetAddress> carried = embeddedIpv4(address);
    for (InetAddress judged : carried.isEmpty() ? List.of(address) : carried) {
      Optional<String> rule = forbidden(shown, judged, loopbackAllowed);
      if (rule.isPresent()) {
        return rule;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> forbidden(
      String shown, InetAddress judged, boolean loopbackAllowed) {
    String key = text(judged);
    if (key.equals(METADATA_LINK_LOCAL)) {
      return Optional.of(shown + " is link-local (cloud metadata)");
    }
    if (METADATA_ELSEWHERE.contains(key)) {
      return Optional.of(shown + " is a cloud metadata endpoint");
    }
    if (judged.isLinkLocalAddress()) {
      return Optional.of(shown + " is link-local");
    }
    if (judged.isAnyLocalAddress() || isThisNetwork(judged)) {
      return Optional.of(shown + " is unspecified");
    }
    if (judged.isLoopbackAddress() && !loopbackAllowed) {
      return Optional.of(
          shown
              + " is loopback, and no entry of "
              + SinkConfig.ALLOWED_URIS
              + " naming a loopback host allowed this URL");
    }
    return Optional.empty();
  }

  /** 0.0.0.0/8: "this host on this network"; Linux connects 0.0.0.0 to the local host. */
  private static boolean isThisNetwork(InetAddress address) {
    return address instanceof Inet4Address && address.getAddress()[0] == 0;
  }

  /** NAT64's well-known prefix, 64:ff9b::/96 (RFC 6052): the IPv4 address in the last 32 bits. */
  private static final byte[] NAT64_PREFIX = {
    0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0
  };

  /** NAT64's local-use prefix, 64:ff9b:1::/48 (RFC 8215). */
  private static final byte[] NAT64_LOCAL_PREFIX = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 1};

  /**
   * Where RFC 6052 puts the IPv4 address's four bytes for each prefix length a local-use prefix may
   * have (/48, /56, /64, /80, /96), skipping byte 8 (bits 64-71, always zero).
   */
  private static final int[][] NAT64_POSITIONS = {
    {6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {10, 11, 12, 13}, {12, 13, 14, 15}
  };

  /**
   * The IPv4 addresses an IPv6 address may carry to where the packet ends up: IPv4-mapped ({@code
   * ::ffff:a.b.c.d}), IPv4-compatible ({@code ::a.b.c.d}, deprecated but still routed by some
   * stacks), SIIT's IPv4-translated ({@code ::ffff:0:a.b.c.d}), NAT64 ({@code 64:ff9b::a.b.c.d},
   * and every RFC 6052 place under the local-use {@code 64:ff9b:1::/48}), 6to4 ({@code
   * 2002:aabb:ccdd::/48}) and Teredo ({@code 2001:0:<server>:...:<client inverted>}); empty for any
   * other address.
   */
  private static List<InetAddress> embeddedIpv4(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return List.of();
    }
    byte[] bytes = address.getAddress();
    boolean firstTenZero = Arrays.equals(bytes, 0, 10, new byte[10], 0, 10);
    boolean mapped = firstTenZero && bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    // ::0.x.x.x is no IPv4 address's compatible form (it covers :: and ::1, IPv6's own unspecified
    // and loopback).
    boolean compatible = firstTenZero && bytes[10] == 0 && bytes[11] == 0 && bytes[12] != 0;
    boolean translated =
        Arrays.equals(bytes, 0, 8, new byte[8], 0, 8)
            && bytes[8] == (byte) 0xff
            && bytes[9] == (byte) 0xff
            && bytes[10] == 0
            && bytes[11] == 0;
    boolean nat64 = Arrays.equals(bytes, 0, 12, NAT64_PREFIX, 0, 12);
    if (mapped || compatible || translated || nat64) {
      return List.of(ipv4(Arrays.copyOfRange(bytes, 12, 16)));
    }
    if (Arrays.equals(bytes, 0, 6, NAT64_LOCAL_PREFIX, 0, 6)) {
      // A place in 0.0.0.0/8 is the padding of another prefix length, not an address a gateway
      // translates to
      // (when every place is: 64:ff9b:1:: itself, unspecified).
      List<InetAddress> candidates = new ArrayList<>();
      for (int[] position : NAT64_POSITIONS) {
        byte[] four = {
          bytes[position[0]], bytes[position[1]], bytes[position[2]], bytes[position[3]]
        };
        if (four[0] != 0) {
          candidates.add(ipv4(four));
        }
      }
      return candidates.isEmpty() ? List.of(ipv4(new byte[4])) : candidates;
    }
    boolean sixToFour = bytes[0] == 0x20 && bytes[1] == 0x02;
    if (sixToFour) {
      return List.of(ipv4(Arrays.copyOfRange(bytes, 2, 6)));
    }
    boolean teredo = bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0 && bytes[3] == 0;
    if (teredo) {
      byte[] client = new byte[4];
      for (int i = 0; i < 4; i++) {
        client[i] = (byte) ~bytes[12 + i];
      }
      return List.of(ipv4(client), ipv4(Arrays.copyOfRange(bytes, 4, 8)));
    }
    return List.of();
  }

  private static InetAddress ipv4(byte[] four) {
    try {
      return InetAddress.getByAddress(four);
    } catch (UnknownHostException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  /** An address as people write it: IPv6 with its longest run of zero groups shortened to "::". */
  static String text(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return address.getHostAddress();
    }
    byte[] bytes = address.getAddress();
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((bytes[2 * i] & 0xff) << 8) | (bytes[2 * i + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 1; // a single zero group stays "0" (RFC 5952)
    for (int i = 0; i < 8; ) {
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        text.append("::");
        i += bestLength - 1;
        continue;
      }
      if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
        text.append(':');
      }
      text.append(Integer.toHexString(groups[i]));
    }
    return text.toString();
  }
}
