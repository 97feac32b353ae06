package io.delayedtask.operator.sink;

import io.delayedtask.operator.config.SinkConfig;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;

/**
 * Which addresses a delivery may never reach, whatever name led there (docs/reference.md: link-local,
 * cloud metadata endpoints and unspecified addresses always; loopback unless the allowlist entry
 * that allowed the URL names that loopback host). IPv4 addresses hidden in IPv6 are judged as the
 * IPv4 address they carry, since that is where the packet ends up: IPv4-mapped
 * ({@code ::ffff:169.254.169.254}) and -compatible ({@code ::169.254.169.254}), which the kernel
 * connects to as IPv4, NAT64 ({@code 64:ff9b::a9fe:a9fe}, RFC 6052), which a NAT64 gateway
 * translates, and 6to4 ({@code 2002:a9fe:a9fe::}, RFC 3056), which a 6to4 relay tunnels there.
 */
public final class AddressGuard {
  /**
   * Metadata services that are not link-local: AWS's IPv6 endpoints (instance metadata, and the
   * Amazon Time Sync/DNS-adjacent fd00:ec2::23) and Alibaba Cloud's.
   */
  private static final Set<String> METADATA_ELSEWHERE = Set.of("fd00:ec2::254", "fd00:ec2::23", "100.100.100.200");
  private static final String METADATA_LINK_LOCAL = "169.254.169.254";

  private AddressGuard() {}

  /**
   * The rule {@code address} breaks, as a sentence ("169.254.169.254 is link-local (cloud
   * metadata)"), or empty when a delivery may connect to it.
   */
  public static Optional<String> forbidden(InetAddress address, boolean loopbackAllowed) {
    String shown = text(address);
    InetAddress judged = embeddedIpv4(address).orElse(address);
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
      return Optional.of(shown + " is loopback, and no entry of " + SinkConfig.ALLOWED_URIS + " naming a loopback host allowed this URL");
    }
    return Optional.empty();
  }

  /** 0.0.0.0/8: "this host on this network"; Linux connects 0.0.0.0 to the local host. */
  private static boolean isThisNetwork(InetAddress address) {
    return address instanceof Inet4Address && address.getAddress()[0] == 0;
  }

  /** NAT64's well-known prefix, 64:ff9b::/96 (RFC 6052): the IPv4 address in the last 32 bits. */
  private static final byte[] NAT64_PREFIX = {0, 0x64, (byte) 0xff, (byte) 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};

  /**
   * The IPv4 address inside an IPv4-mapped ({@code ::ffff:a.b.c.d}), IPv4-compatible
   * ({@code ::a.b.c.d}, deprecated but still routed by some stacks), NAT64 ({@code 64:ff9b::a.b.c.d})
   * or 6to4 ({@code 2002:aabb:ccdd::/48}) IPv6 address.
   */
  private static Optional<InetAddress> embeddedIpv4(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return Optional.empty();
    }
    byte[] bytes = address.getAddress();
    boolean firstTenZero = Arrays.equals(bytes, 0, 10, new byte[10], 0, 10);
    boolean mapped = firstTenZero && bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    // ::0.x.x.x is no IPv4 address's compatible form (it covers :: and ::1, IPv6's own unspecified and loopback).
    boolean compatible = firstTenZero && bytes[10] == 0 && bytes[11] == 0 && bytes[12] != 0;
    boolean nat64 = Arrays.equals(bytes, 0, 12, NAT64_PREFIX, 0, 12);
    if (mapped || compatible || nat64) {
      return Optional.of(ipv4(Arrays.copyOfRange(bytes, 12, 16)));
    }
    boolean sixToFour = bytes[0] == 0x20 && bytes[1] == 0x02;
    if (sixToFour) {
      return Optional.of(ipv4(Arrays.copyOfRange(bytes, 2, 6)));
    }
    return Optional.empty();
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
