package io.delayedtask.operator.testing;

import io.delayedtask.operator.sink.NameResolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * The in-process operators' name resolver: names ending in {@code .test} resolve to the addresses
 * the guard must refuse (without DNS), everything else as the system resolves it. With {@link
 * LoopbackOnlySockets} a broken guard fails to connect instead of sending a packet anywhere.
 */
public final class TestResolver implements NameResolver {
  /** A name that resolves to the cloud metadata address. */
  public static final String METADATA = "metadata.test";

  /** A name that resolves to an IPv6 link-local address. */
  public static final String LINK_LOCAL_V6 = "link-local.test";

  /**
   * A name that resolves to loopback without naming it (so no allowlist entry naming it names
   * loopback).
   */
  public static final String LOOPBACK = "loopback.test";

  /**
   * Names that resolve to metadata endpoints the guard knows in less common forms: Azure's
   * WireServer, NAT64 local-use, SIIT, Teredo.
   */
  public static final String WIRESERVER = "wireserver.test";

  public static final String NAT64_LOCAL = "nat64-local.test";
  public static final String SIIT = "siit.test";
  public static final String TEREDO = "teredo.test";

  private static final Map<String, String> ADDRESSES =
      Map.of(
          METADATA, "169.254.169.254",
          LINK_LOCAL_V6, "fe80::1",
          LOOPBACK, "127.0.0.1",
          WIRESERVER, "168.63.129.16",
          NAT64_LOCAL, "64:ff9b:1::a9fe:a9fe",
          SIIT, "::ffff:0:a9fe:a9fe",
          TEREDO, "2001:0:4136:e378:8000:63bf:5601:5601");

  @Override
  public List<InetAddress> resolve(String host) throws UnknownHostException {
    String address = ADDRESSES.get(host);
    if (address != null) {
      return List.of(InetAddress.getByName(address)); // an IP literal: no lookup
    }
    if (host.endsWith(".test")) {
      throw new UnknownHostException(host + " is not a test name");
    }
    return NameResolver.SYSTEM.resolve(host);
  }
}
