/**
 * What happens when a sink task is due: all of a delivery to a service over HTTP
 * (docs/reference.md, "Delivering to a service"), from the claim to what the answer makes of the
 * task. {@code reconcile/} decides and writes (its {@code TaskDecider} asks this package, its
 * {@code StatusWriter} writes the status); nothing here calls the API server about a DelayedTask,
 * and nothing here imports {@code reconcile/} ({@code LayoutTest}).
 *
 * <h2>A sink task is due, step by step</h2>
 *
 * <ol>
 *   <li><b>Due.</b> The leader's poller claims the task's entry and its reconcile decides. {@code
 *       TaskDecider} hands a sink task to {@link io.delayedtask.operator.sink.DeliveryDecisions}:
 *       {@code sendNext} picks the attempt ({@link io.delayedtask.operator.sink.DeliveryAttempt}:
 *       the sink's {@code retry + 1}, then the dead-letter sink's), its timeout and retry settings
 *       from {@code spec.delivery} ({@code DeliverySettings}), and parks the entry at a safety net
 *       (the attempt's timeout + 15 s: a crash sends the same attempt again). It answers with a
 *       {@link io.delayedtask.operator.sink.DeliveryPlan}, whose parts the decider puts into its
 *       plan as they are; the reconciler then calls {@link
 *       io.delayedtask.operator.sink.DeliveryStarter} ({@link
 *       io.delayedtask.operator.sink.SinkDeliveryStarter}), which returns at once.
 *   <li><b>Destination resolved</b> ({@link io.delayedtask.operator.sink.Destinations}): a {@code
 *       ref} to a {@code v1} Service becomes {@code http://<name>.<ns>.svc.<domain>} from an
 *       informer ({@link io.delayedtask.operator.sink.InformedServices}, behind {@link
 *       io.delayedtask.operator.sink.ServiceDirectory}: no request per attempt), refused when its
 *       EndpointSlices name an address that is not a Pod of the namespace, an ExternalName followed
 *       only when the allowlist allows its URL; a {@code ref} to any other kind is a Knative
 *       Addressable whose {@code status.address.url} comes from an informer of that kind ({@link
 *       io.delayedtask.operator.sink.Addressables}); a {@code uri} must match an entry of
 *       DELAYEDTASK_SINK_ALLOWED_URIS. What cannot be resolved (a missing Service, an Addressable
 *       without an address) is an outcome already: step 8.
 *   <li><b>Token</b> ({@link io.delayedtask.operator.sink.ServiceAccountTokens}): with {@code
 *       audience}, a token of the operator's sender ServiceAccount in the task's namespace (a
 *       TokenRequest, kept until 80% of its lifetime), sent only over https or to an in-cluster
 *       Service ({@link io.delayedtask.operator.sink.MissingServiceAccountException} when there is
 *       none). With {@code signing}, the secrets of its key in the signing Secret, from an informer
 *       on that one Secret name ({@link
 *       io.delayedtask.operator.sink.signing.InformedSigningSecrets}, no request per attempt); when
 *       they cannot be had ({@link io.delayedtask.operator.sink.signing.SigningSecretException})
 *       the attempt is an outcome already, retried, and nothing is sent.
 *   <li><b>Request</b> ({@link io.delayedtask.operator.sink.DeliveryRequest}): the task's event
 *       (the payload, or {@code spec.data} with its content type, {@code ceOverrides} extensions,
 *       {@code ce-id} {@code <uid>.<due ms>}), where to connect, the token, {@code caCerts} ({@code
 *       TrustedCerts}), the timeout; handed to the {@link io.delayedtask.operator.sink.Sender}
 *       ({@link io.delayedtask.operator.sink.OkHttpSender}), which writes it as a CloudEvent in
 *       HTTP binary mode with the CloudEvents SDK ({@code CloudEventMessage}) and returns at once;
 *       with signing keys it adds the Standard Webhooks headers ({@link
 *       io.delayedtask.operator.sink.signing.SigningKeys}) over the body as sent, with the
 *       attempt's send time.
 *   <li><b>Slot</b> ({@code DeliverySlots}): at most so many requests open overall, per host and
 *       per namespace, a reserve kept for lightly loaded namespaces; a request waits for a slot at
 *       most its timeout.
 *   <li><b>Guard</b> ({@link io.delayedtask.operator.sink.AddressGuard}): the name is resolved
 *       ({@link io.delayedtask.operator.sink.NameResolver}) through OkHttp's {@code Dns} hook
 *       ({@code GuardedDns}), which drops forbidden addresses, and the address actually connected
 *       to is checked again ({@code ConnectCheck}); a refusal is a {@code
 *       ForbiddenAddressException}, never a packet sent.
 *   <li><b>CloudEvent sent</b>: the {@code POST}, within the attempt's timeout (what the slot left
 *       of it); the answer's status and Retry-After are kept, its body closed unread. The result is
 *       a {@link io.delayedtask.operator.sink.DeliveryResult}: {@code Answered}, {@code NoAnswer}
 *       or {@code Forbidden}.
 *   <li><b>Outcome</b> ({@link io.delayedtask.operator.sink.DeliveryOutcome}, with the Redis clock
 *       at the attempt's end): it reaches {@link io.delayedtask.operator.sink.DeliveryOutcomes}, a
 *       JOSDK event source, whose event reconciles the task again; no reconcile thread waited.
 *   <li><b>Retry, dead letter, status.</b> That reconcile hands the outcome to {@link
 *       io.delayedtask.operator.sink.DeliveryDecisions#record}: the answer's verdict and backoff
 *       ({@link io.delayedtask.operator.sink.RetryPolicy}: 2xx delivered; no answer, 404, 408, 409,
 *       425, 429, 5xx retried; the rest final), then {@code status.delivery}, {@code sinkUri}, the
 *       phase and conditions written into the desired status, and a {@code DeliveryPlan} naming the
 *       entry (the retry's Redis-clock time, the dead-letter sink's turn, or removed), the metric
 *       and the Event. {@code TaskDecider} puts it into its plan, and the reconciler writes the
 *       status with one write ({@code StatusWriter}), moves the entry, records the Event and counts
 *       the attempt.
 * </ol>
 *
 * <h2>Why one package, and why {@code sink/}</h2>
 *
 * <p>Everything a delivery does is in this one folder, so that following one delivery stays in it:
 * the sender, destinations, guard, tokens and slots, and the decisions, outcomes, settings and
 * starters. The folder is named as the task's {@code spec.sink} is. The seam with the reconciler is
 * a value: {@code DeliveryDecisions} reads a {@link
 * io.delayedtask.operator.sink.DeliveryDecisions.SinkTask} and answers a {@link
 * io.delayedtask.operator.sink.DeliveryPlan} (entry, claim, attempt, metric, Events) in the types
 * of {@code decision/}, which the reconciler's {@code Plan} is made of too: nothing translates
 * between them, and the dependency goes one way.
 *
 * <h2>The guard</h2>
 *
 * <p>A task author chooses the destination, so the operator must not become a way into what only it
 * can reach: link-local addresses and cloud metadata endpoints (credentials), unspecified
 * addresses, and loopback unless the entry of DELAYEDTASK_SINK_ALLOWED_URIS that allowed the URL
 * names that loopback host ({@link io.delayedtask.operator.sink.AddressGuard}). A URL string says
 * little (a DNS name, an ExternalName Service, {@code [::ffff:169.254.169.254]} all lead there), so
 * the check runs on addresses: after resolution, in OkHttp's {@code Dns} hook ({@code GuardedDns},
 * which drops forbidden addresses and fails when none remain), and again on the address each
 * connection actually goes to, in an {@code EventListener.connectStart} ({@code ConnectCheck},
 * which cancels the call before its socket connects; it also covers IP-literal hosts, which OkHttp
 * connects to without asking the {@code Dns}). Redirects are never followed and no proxy is used,
 * so no other address is reached behind the checked one.
 *
 * <h2>One attempt</h2>
 *
 * <p>The request is a CloudEvent 1.0 in HTTP binary mode, written by the CloudEvents SDK ({@code
 * CloudEventMessage}): {@code POST}, {@code spec.data} verbatim with {@code Content-Type:
 * <contentType>} or the payload as a JSON body, the attributes (the task's {@code ceOverrides}
 * among them) as {@code ce-*} headers, {@code ce-id} the same for every attempt at one due time.
 * The answer's status and Retry-After are kept; its body is closed unread and never stored or
 * logged. {@code send} never blocks and its stage never completes exceptionally: {@code Answered},
 * {@code NoAnswer} (refused, reset, timeout, TLS) or {@code Forbidden}.
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
