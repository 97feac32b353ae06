package io.delayedtask.operator.reconcile;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Claimed reconciles (or outcomes), one namespace's turn after another's, each namespace's in
 * arrival order: a namespace with hundreds due at once (retries of deliveries that all timed out
 * together) does not make another namespace's due task wait behind them all, only behind one of
 * each. Under {@link ReconcileLanes}' lock.
 */
final class NamespacesInTurn {
  /** Namespace to its waiting reconciles; the first entry's namespace has the next turn. */
  private final LinkedHashMap<String, LinkedHashSet<Runnable>> byNamespace = new LinkedHashMap<>();

  private int size;

  void add(Runnable runnable) {
    if (byNamespace
        .computeIfAbsent(QueuedReconcile.namespaceOf(runnable), ns -> new LinkedHashSet<>())
        .add(runnable)) {
      size++;
    }
  }

  boolean remove(Object runnable) {
    if (!(runnable instanceof Runnable queued)) {
      return false;
    }
    String namespace = QueuedReconcile.namespaceOf(queued);
    LinkedHashSet<Runnable> waiting = byNamespace.get(namespace);
    if (waiting == null || !waiting.remove(queued)) {
      return false;
    }
    size--;
    if (waiting.isEmpty()) {
      byNamespace.remove(namespace);
    }
    return true;
  }

  /** The next namespace's first reconcile; that namespace goes to the back of the turns. */
  Runnable poll() {
    Iterator<Map.Entry<String, LinkedHashSet<Runnable>>> turns = byNamespace.entrySet().iterator();
    if (!turns.hasNext()) {
      return null;
    }
    Map.Entry<String, LinkedHashSet<Runnable>> turn = turns.next();
    turns.remove();
    Iterator<Runnable> waiting = turn.getValue().iterator();
    Runnable next = waiting.next();
    waiting.remove();
    size--;
    if (!turn.getValue().isEmpty()) {
      byNamespace.put(turn.getKey(), turn.getValue());
    }
    return next;
  }

  Runnable peek() {
    return byNamespace.isEmpty() ? null : byNamespace.values().iterator().next().iterator().next();
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  /** In the order they would run. */
  List<Runnable> snapshot() {
    List<Runnable> all = new ArrayList<>();
    List<Iterator<Runnable>> lanes = new ArrayList<>();
    byNamespace.values().forEach(waiting -> lanes.add(waiting.iterator()));
    boolean any = true;
    while (any) {
      any = false;
      for (Iterator<Runnable> lane : lanes) {
        if (lane.hasNext()) {
          all.add(lane.next());
          any = true;
        }
      }
    }
    return all;
  }
}
