package io.delayedtask.operator.scale;

import java.io.IOException;
import java.util.Map;

/**
 * Pins processes to CPUs with {@code taskset}, so a scale run on one machine can model a cluster
 * where the API server and etcd run on control-plane nodes, not on the CPU the operator and its
 * workloads use. Every thread of the process is pinned, and the threads it starts later inherit it.
 */
final class CpuPinning {
  private CpuPinning() {}

  /** The CPU list (taskset syntax, "0" or "1-3") each process is pinned to, printed. */
  static void pin(Map<String, ProcessHandle> processes, String cpus) {
    processes.forEach(
        (name, process) -> {
          try {
            Process taskset =
                new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            String said = new String(taskset.getInputStream().readAllBytes()).trim();
            if (taskset.waitFor() != 0) {
              throw new IllegalStateException(
                  "taskset -a -p -c " + cpus + " " + process.pid() + " failed: " + said);
            }
            System.out.printf("   pinned %s (%d) to CPU %s%n", name, process.pid(), cpus);
          } catch (IOException e) {
            throw new IllegalStateException(
                "taskset (util-linux) is needed for -DpinControlPlane", e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        });
  }
}
