package io.delayedtask.operator.sink;

import java.net.InetSocketAddress;
import java.net.Proxy;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.EventListener;

/**
 * The guard's second look, at the address OkHttp is about to connect to: whatever the lookup
 * returned, and also IP-literal URL hosts, which OkHttp connects to without asking the {@code Dns}.
 * A forbidden address cancels the call before its socket connects (OkHttp checks for cancellation
 * between {@code connectStart} and the connect), and the rule is kept for the result.
 *
 * <p>One per call: the rule it keeps belongs to that call.
 */
final class ConnectCheck extends EventListener {
  private final boolean loopbackAllowed;
  private final AtomicReference<String> brokenRule = new AtomicReference<>();

  ConnectCheck(boolean loopbackAllowed) {
    this.loopbackAllowed = loopbackAllowed;
  }

  @Override
  public void connectStart(Call call, InetSocketAddress address, Proxy proxy) {
    Optional<String> rule = address.getAddress() == null
        ? Optional.of(address.getHostString() + " was not resolved before connecting")
        : AddressGuard.forbidden(address.getAddress(), loopbackAllowed);
    if (rule.isPresent()) {
      brokenRule.compareAndSet(null, rule.get());
      call.cancel();
    }
  }

  /** The rule a connection attempt broke, if one did. */
  Optional<String> brokenRule() {
    return Optional.ofNullable(brokenRule.get());
  }
}
