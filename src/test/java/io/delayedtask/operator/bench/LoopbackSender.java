package io.delayedtask.operator.bench;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.sink.OkHttpSender;
import io.delayedtask.operator.testing.LoopbackOnlySockets;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.time.Clock;
import java.util.List;

/** The operator's sender with its default settings, every name resolving to 127.0.0.1. */
final class LoopbackSender {
  private LoopbackSender() {}

  static OkHttpSender open() {
    return new OkHttpSender(
        SinkConfig.defaults(),
        new SimpleMeterRegistry(),
        host -> List.of(InetAddress.getByName("127.0.0.1")),
        new LoopbackOnlySockets(),
        Clock.systemUTC());
  }
}
