package io.delayedtask.operator.sink;

import io.delayedtask.operator.sink.Destinations.Resolution;

/**
 * Where a Knative Addressable's {@code status.address.url} points, as its cache holds it at the
 * attempt: the operator's informers ({@link Addressables}), a fake in unit tests. {@link
 * Destinations} then holds the URL to the walls of an absolute URL.
 */
public interface AddressableDirectory {
  /**
   * The URL of the Addressable {@code apiVersion}/{@code kind} named {@code name} in {@code
   * namespace}, with {@code pathAndQuery} appended ({@link Resolution.Resolved}, nothing else
   * decided yet); or why there is none.
   */
  Resolution resolve(
      String namespace, String apiVersion, String kind, String name, String pathAndQuery);
}
