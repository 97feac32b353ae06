package io.delayedtask.operator.scale;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU and memory of a few processes over one phase of a run: CPU time used in the phase divided by
 * its wall time (1.00 = one core busy all along), resident memory now (VmRSS) and at its peak
 * (VmHWM), from /proc. The machine's load average is printed beside, since the cores are shared.
 */
final class ProcessMeter {
  private final Map<String, ProcessHandle> processes;
  private final Map<String, Duration> cpuAtStart = new LinkedHashMap<>();
  private final long startNanos = System.nanoTime();

  private ProcessMeter(Map<String, ProcessHandle> processes) {
    this.processes = new LinkedHashMap<>(processes);
    this.processes.forEach((name, process) -> cpuAtStart.put(name, cpu(process)));
  }

  static ProcessMeter start(Map<String, ProcessHandle> processes) {
    return new ProcessMeter(processes);
  }

  void print(String phase) {
    double wall = (System.nanoTime() - startNanos) / 1e9;
    System.out.printf("CPU and memory during %s (%.1f s wall; %s):%n", phase, wall, loadAverage());
    System.out.printf(
        "  %-40s %10s %8s %10s %10s%n", "process", "CPU s", "cores", "VmRSS MB", "VmHWM MB");
    processes.forEach(
        (name, process) -> {
          double cpu = (cpu(process).toMillis() - cpuAtStart.get(name).toMillis()) / 1000.0;
          System.out.printf(
              "  %-40s %10.1f %8.2f %10s %10s%n",
              name + " (" + process.pid() + ")",
              cpu,
              cpu / wall,
              memory(process, "VmRSS"),
              memory(process, "VmHWM"));
        });
  }

  static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return "load average " + parts[0] + " " + parts[1] + " " + parts[2];
    } catch (IOException e) {
      return "load average unknown";
    }
  }

  private static Duration cpu(ProcessHandle process) {
    return process.info().totalCpuDuration().orElse(Duration.ZERO);
  }

  private static String memory(ProcessHandle process, String field) {
    try {
      for (String line :
          Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
        if (line.startsWith(field + ":")) {
          long kb = Long.parseLong(line.replaceAll("\\D+", ""));
          return String.format("%,d", kb / 1024);
        }
      }
      return "-";
    } catch (IOException | NumberFormatException e) {
      return "gone";
    }
  }
}
