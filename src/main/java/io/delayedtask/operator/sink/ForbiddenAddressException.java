package io.delayedtask.operator.sink;

import java.net.UnknownHostException;

/**
 * Every address a destination resolved to is forbidden. An {@link UnknownHostException} because
 * that is what OkHttp lets a {@code Dns} throw; the sender reports it as {@code Forbidden}, never
 * as a lookup failure.
 */
final class ForbiddenAddressException extends UnknownHostException {
  private final String rule;

  ForbiddenAddressException(String rule) {
    super(rule);
    this.rule = rule;
  }

  String rule() {
    return rule;
  }
}
