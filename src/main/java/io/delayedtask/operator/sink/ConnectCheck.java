package io.delayedtask.operator.sink;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * The last look at an address, at the moment it is used: in {@code connectStart}, the address
 * OkHttp is about to connect to (whatever the lookup returned, and also IP-literal URL hosts, which
 * OkHttp connects to without asking the {@code Dns}), and, as a network interceptor, the address of
 * the connection a request is about to be written on (a pooled one included). Both ask the
 * request's {@link Reach} as it is now ({@link #of}). A refused address cancels the call before its
 * socket connects (OkHttp checks for cancellation between {@code connectStart} and the connect) or
 * before a byte of the request is written, and the refusal is kept for the result.
 *
 * <p>One per call: the refusal it keeps belongs to that call.
 */
final class ConnectCheck extends EventListener implements Interceptor {
  /** Why an address is not used now. */
  record Refusal(String why, boolean forbidden) {
    /** A rule forbids it: the attempt is {@code Forbidden}, never retried. */
    static Refusal forbidden(String rule) {
      return new Refusal(rule, true);
    }

    /**
     * Not there now (an endpoint gone since the lookup): the attempt goes unanswered and may be
     * retried.
     */
    static Refusal missed(String why) {
      return new Refusal(why, false);
    }
  }

  /** The judgement of one address, made when it is used. */
  @FunctionalInterface
  interface AddressCheck {
    Optional<Refusal> refused(InetSocketAddress address);
  }

  private final AddressCheck check;
  private final AtomicReference<Refusal> refusal = new AtomicReference<>();

  ConnectCheck(AddressCheck check) {
    this.check = check;
  }

  /**
   * The check a request's reach asks for: the guard, and for a Service its verified endpoints now.
   */
  static AddressCheck of(Reach reach, EndpointDns endpoints) {
    if (reach instanceof Reach.ByName byName) {
      return address ->
          address.getAddress() == null
              ? Optional.of(
                  Refusal.forbidden(
                      address.getHostString() + " was not resolved before connecting"))
              : AddressGuard.forbidden(address.getAddress(), byName.loopbackAllowed())
                  .map(Refusal::forbidden);
    }
    return address ->
        address.getAddress() == null
            ? Optional.of(
                Refusal.forbidden(address.getHostString() + " was not resolved before connecting"))
            : endpoints.refused(address);
  }

  @Override
  public void connectStart(Call call, InetSocketAddress address, Proxy proxy) {
    Optional<Refusal> refused = check.refused(address);
    if (refused.isPresent()) {
      refusal.compareAndSet(null, refused.get());
      call.cancel();
    }
  }

  /**
   * A network interceptor: the connection is chosen (new or pooled) and nothing of the request is
   * written yet.
   */
  @Override
  public Response intercept(Chain chain) throws IOException {
    Connection connection = chain.connection();
    if (connection != null) {
      Optional<Refusal> refused = check.refused(connection.route().socketAddress());
      if (refused.isPresent()) {
        refusal.compareAndSet(null, refused.get());
        chain.call().cancel();
        throw new IOException("refused before writing: " + refused.get().why());
      }
    }
    return chain.proceed(chain.request());
  }

  /** Why an address of this call was not used, if one was not. */
  Optional<Refusal> refusal() {
    return Optional.ofNullable(refusal.get());
  }
}
