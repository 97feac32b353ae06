package io.delayedtask.operator.bench;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

/** The sink a system keeps for its whole run; each phase points it at that phase's recorder. */
final class PhaseSink implements DeliverySink {
  private final AtomicReference<FireRecorder> current = new AtomicReference<>(new FireRecorder());

  FireRecorder beginPhase() {
    FireRecorder recorder = new FireRecorder();
    current.set(recorder);
    return recorder;
  }

  @Override
  public void delivered(String id) {
    current.get().delivered(id);
  }

  @Override
  public void claimedByServerClock(String id, Instant claimedAt) {
    current.get().claimedByServerClock(id, claimedAt);
  }
}
