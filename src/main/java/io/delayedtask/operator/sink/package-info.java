/**
 * Delivering a due task to a service over HTTP (docs/reference.md, "Delivering to a service"): where
 * the sink points ({@link io.delayedtask.operator.sink.Destinations}; a Knative Addressable's
 * address from an informer of its kind, {@link io.delayedtask.operator.sink.Addressables}), the token it may carry
 * ({@link io.delayedtask.operator.sink.ServiceAccountTokens}), one attempt
 * ({@link io.delayedtask.operator.sink.Sender}, {@link io.delayedtask.operator.sink.OkHttpSender})
 * and what its result means ({@link io.delayedtask.operator.sink.RetryPolicy}). The reconciler
 * decides and records; nothing here reads or writes a DelayedTask.
 *
 * <h2>One attempt</h2>
 *
 * <p>The request is a CloudEvent 1.0 in HTTP binary mode, written by the CloudEvents SDK
 * ({@code CloudEventMessage}): {@code POST}, {@code spec.data} verbatim with {@code Content-Type:
 * <contentType>} or the payload as a JSON body, the attributes (the task's {@code ceOverrides}
 * among them) as {@code ce-*} headers, {@code ce-id} the same for every attempt
 * at one due time. The answer's status and Retry-After are kept; its body is closed unread and never
 * stored or logged. {@code send} never blocks and its stage never completes exceptionally:
 * {@code Answered}, {@code NoAnswer} (refused, reset, timeout, TLS) or {@code Forbidden}.
 *
 * <h2>The guard</h2>
 *
 * <p>A task author chooses the destination, so the operator must not become a way into what only
 * it can reach: link-local addresses and cloud metadata endpoints (credentials), unspecified
 * addresses, and loopback unless the entry of DELAYEDTASK_SINK_ALLOWED_URIS that allowed the URL
 * names that loopback host ({@link io.delayedtask.operator.sink.AddressGuard}). A URL string says little (a DNS name, an
 * ExternalName Service, {@code [::ffff:169.254.169.254]} all lead there), so the check runs on
 * addresses: after resolution, in OkHttp's {@code Dns} hook ({@code GuardedDns}, which drops
 * forbidden addresses and fails when none remain), and again on the address each connection
 * actually goes to, in an {@code EventListener.connectStart} ({@code ConnectCheck}, which cancels
 * the call before its socket connects; it also covers IP-literal hosts, which OkHttp connects to
 * without asking the {@code Dns}). Redirects are never followed and no proxy is used, so no other
 * address is reached behind the checked one.
 *
 * <h2>Why OkHttp</h2>
 *
 * <ul>
 *   <li>the {@code Dns} hook and the {@code EventListener}'s {@code connectStart}: the guard sees
 *       the resolved addresses and the one connected to, which the JDK's HttpClient does not show;
 *   <li>the {@code Dispatcher}: asynchronous calls bounded overall and per host
 *       (DELAYEDTASK_SINK_MAX_IN_FLIGHT, _PER_HOST), the excess queued, so a slow receiver holds
 *       back only its own deliveries and no reconcile thread waits for an answer;
 *   <li>per-call settings on a shared pool: {@code client.newBuilder()} derives, per request, a
 *       client with that request's call timeout (connect, write and answer together), {@code Dns}
 *       and TLS trust ({@code sink.caCerts}), sharing the connection pool and dispatcher.
 * </ul>
 *
 * <p>Tests never send a packet off loopback: receivers are mockwebserver3 on 127.0.0.1, names
 * resolve through a fake {@link io.delayedtask.operator.sink.NameResolver}, and the client under
 * test gets sockets that refuse any other address, so a broken guard fails a test instead of
 * reaching 169.254.169.254.
 */
package io.delayedtask.operator.sink;
