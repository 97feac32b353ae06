#!/usr/bin/env bash
# Breaks one behaviour on purpose and runs the tests that name it, to see them fail (issue 18: a
# test that cannot fail for what it names proves nothing). Each break is one edit to a fresh clone
# of this repository's HEAD (uncommitted changes are not included) in a temporary folder; this
# working tree is never touched. An edit that no longer applies (the code moved) stops with
# "EDIT DID NOT APPLY" rather than passing quietly. docs/development.md#seen-failing has the results.
#
#   tools/seen-failing.sh             the list of breaks
#   tools/seen-failing.sh --check     whether every edit still applies to HEAD (no tests run)
#   tools/seen-failing.sh NAME...     run those; NAME.log (summary) and NAME.out (Maven's output)
#                                     go to target/seen-failing/. A break is seen when the build fails
#                                     in the tests it names.
#
# Needs what `mvn verify` needs, already in place (control plane built, Maven repository filled):
# it runs Maven offline with -DskipControlPlane -DskipTestPackages.
set -uo pipefail
# One brace group, read whole before it runs: editing this file (a new break) while a run goes on
# cannot change what that run executes.
{
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/target/seen-failing"
D=src/main/java/io/delayedtask/operator
T=src/test/java/io/delayedtask/operator

# One break a line, tab-separated: name, kind (unit, or it: failsafe; a test of pom.xml's loopbackOnlyITs runs in
# its loopback-only JVM, the others in the default one; netns is the same as it), the tests,
# what it breaks, the edit (bash, run in the clone)
breaks() {
cat <<'LIST'
suspend	it	LifecycleIT#suspendedTaskWaitsAndFiresAtOnceWhenResumed+unsuspendedPastItsStartingDeadlineItIsMissed	spec.suspend ignored	sed -i 's/if (facts.task().getSpec().isSuspended()) {/if (false \&\& facts.task().getSpec().isSuspended()) {/' $D/reconcile/TaskDecider.java
ttl	it	LifecycleIT#finishedTaskIsDeletedAfterItsTtl+aJobDeletedWhileRunningFailsTheTaskAndItsTtlStarts	every TTL counted twice	sed -i 's/Times.plusSecondsCapped(finished, ttl.get()))/Times.plusSecondsCapped(finished, ttl.get() * 2))/' $D/reconcile/TaskDecider.java
move	it	LifecycleIT#changingTheDueTimeMovesTheEntry	a Scheduled task's new due time not written to Redis (left to the resync)	perl -0pi -e 's/== Phase.Scheduled\n\s+&& Times.format\(due\).equals\(draft.current.getDueTime\(\)\);/== Phase.Scheduled;/' $D/reconcile/TaskDecider.java
events	it	LifecycleIT#aRunAtChangedAfterFiringFiresAgain,ApiServerWithoutSchemaIT,LeadershipIT	a second JobCreated Event per firing	perl -0pi -e 's/(      events.normal\(task, event.reason\(\), event.message\(\)\);\n)/$1      if ("JobCreated".equals(event.reason())) { events.normal(task, event.reason(), "again " + event.message()); }\n/' $D/reconcile/DelayedTaskReconciler.java
get	it	RequestBudgetIT	a GET of the task in every reconcile	perl -0pi -e 's/(    DelayedTask task = read;\n)/$1    context.getClient().resources(DelayedTask.class).inNamespace(read.getMetadata().getNamespace()).withName(read.getMetadata().getName()).get();\n/' $D/reconcile/DelayedTaskReconciler.java
addressget	it	RequestBudgetIT	a GET of the Addressable at every attempt, not its informer's cache (issue 24)	sed -i 's/^    GenericKubernetesResource found = informer.getStore().getByKey(Cache.namespaceKeyFunc(namespace, name));/    client.genericKubernetesResources(apiVersion, kind).inNamespace(namespace).withName(name).get();\n&/' $D/sink/Addressables.java
rebuild	it	RedisOutageIT	no resync on demand (a restarted Redis, a failed write): only the periodic one	sed -i 's/if (active \&\& (resyncWanted || !now.isBefore(nextResync))) {/if (active \&\& (false || !now.isBefore(nextResync))) {/' $D/leader/ScheduleKeeper.java
takeover	it	LeaderKillIT#standbyFiresAllOnceWhenTheLeaderIsKilledRightAfterClaiming	a new leader does not take over its predecessor's claims	sed -i 's/^    takeOverClaims(schedule);/    \/\/ broken/' $D/ScheduleWiring.java
killawait	it	LeaderKillIT#repeatedLeaderKillsWhileTasksKeepFallingDue	(test side) the kill no longer waits for claims in flight	perl -0pi -e 's/    await\("the leader claimed the batch"\).*?\n.*?\n//' $T/faults/LeaderKillIT.java
pauseearly	it	LeaderPauseIT	(test side) the pause no longer waits until the leader is firing	perl -0pi -e 's/    await\("the leader is firing"\)[^\n]*\n//' $T/faults/LeaderPauseIT.java
standby	it	LeadershipIT	(test side) the old leader fires the handed-over tasks before it stops	perl -0pi -e 's/(    leader.close\(\);\n    Instant leaderStopped)/    handedOver.forEach(name -> await(name).atMost(Duration.ofSeconds(60)).until(() -> phase(client, ns, name).orElse(null) == Phase.Fired));\n$1/' $T/it/LeadershipIT.java
rbac	it	RbacFromAuditLogIT	the chart grants a verb nothing uses	sed -i 's/  verbs: \["get", "list", "watch", "patch", "delete"\]/  verbs: ["get", "list", "watch", "patch", "delete", "update"]/' helm/delayed-task-operator/templates/_helpers.tpl
recorded	unit	SpecValidatorTest,TaskDeciderTest	the recorded dueTime does not stand (issue 16, 1)	sed -i 's/      if (recorded != null) {/      if (false \&\& recorded != null) {/' $D/task/SpecValidator.java
wiring	unit	ScheduleWiringTest	claims taken over after the poller starts	perl -0pi -e 's/    takeOverClaims\(schedule\);\n(.*?)    poller.start\(\);\n/$1    poller.start();\n    takeOverClaims(schedule);\n/s' $D/ScheduleWiring.java
skew	it	DueClaimsIT#aFailingClaimWaitsItsBackoffByRedisClockWhateverThisHostsClockSays	a retry scored by a host clock 60 s behind Redis's (issue 16, 2)	sed -i 's/release(entry, entry.claimedAt().plus(backoff));/release(entry, java.time.Instant.now().minusSeconds(60).plus(backoff));/' $D/schedule/SchedulePoller.java
forbidden	it	DueClaimsIT#anEntryOfATaskInANamespaceTheOperatorMayNotReadIsDroppedOnce	a 403 not recognised (issue 16, 4)	sed -i 's/if (e.getCode() == 403) {/if (e.getCode() == 4030) {/' $D/leader/DueClaims.java && sed -i 's/if (e.getCode() != 403) {/if (e.getCode() != 4030) {/' $D/leader/ScheduleResync.java
blocking	it	DueClaimsIT#slowLookupsOfStaleEntriesDoNotDelayAClaimOfAKnownTask	lookups on the poller's thread (issue 16, 5)	sed -i 's/return CompletableFuture.supplyAsync(() -> existsOnApiServer(ref), lookups)/return CompletableFuture.completedFuture(existsOnApiServer(ref))/' $D/leader/DueClaims.java
synced	it	InformerTaskCacheIT	synced without the informers (issue 16, 6)	sed -i 's/if (!synced \&\& cache != null \&\& informersSynced.getAsBoolean()) {/if (!synced \&\& cache != null) {/' $D/leader/InformerTaskCache.java
ttlrv	it	TtlDeletionIT	the TTL deletion without its precondition (issue 16, 8)	sed -i '/          .lockResourceVersion(decidedOn.getMetadata().getResourceVersion())/d' $D/reconcile/TtlDeletion.java
lastjob	it	ApiServerFaultIT#aJobThatCompletes*,JobControllerIT	a deleted Job's last state not kept (issue 16, 3)	sed -i 's/          taskJobs.deleted(job);/          \/\/ broken/' $D/reconcile/DelayedTaskReconciler.java
defaultdeadline	unit	TaskDeciderTest	the operator-wide default starting deadline ignored	sed -i 's/Long deadline = startingDeadline.secondsFor(task).orElse(null);/Long deadline = task.getSpec().getStartingDeadlineSeconds();/' $D/reconcile/TaskDecider.java
chartreadme	unit	ChartReadmeTest	a values.yaml comment changed without regenerating the chart README	sed -i 's/^# Operator pods. Two by default/# Operator replicas. Two by default/' helm/delayed-task-operator/values.yaml
thirdparty	unit	LicensingTest	a library the jar ships missing from THIRD-PARTY-NOTICES.md	sed -i '/io.lettuce:lettuce-core/d' THIRD-PARTY-NOTICES.md
dockerpin	unit	DockerfileTest	the runtime base image by tag only	sed -i 's/^FROM eclipse-temurin:17-jre@sha256:[0-9a-f]*/FROM eclipse-temurin:17-jre/' Dockerfile
anchor	unit	DocLinksTest	a link to a heading that is not there	sed -i 's/#a-task-deleted-and-created-again-fires-again/#a-re-created-task-fires-again/' docs/reference.md
docvar	unit	DocFactsTest	the docs name a variable the operator does not read	sed -i 's/^`java -jar delayed-task-operator.jar` (the image/`DELAYEDTASK_KEY_PREFIXES`: `java -jar delayed-task-operator.jar` (the image/' docs/reference.md
cejson	unit	SpecValidatorTest	spec.data not checked as JSON under a JSON content type	sed -i 's/EventBodies.isJson(EventBodies.contentType(contentType)) \&\& !EventBodies.isJsonText(data)/false/' $D/task/SpecValidator.java
cedata	unit	OkHttpSenderTest	spec.data ignored: the payload is the body	sed -i 's/    task.data().ifPresentOrElse(/    java.util.Optional.<DeliveryRequest.Data>empty().ifPresentOrElse(/' $D/sink/CloudEventMessage.java
ceext	it	SinkDeliveryIT#dataIsSentVerbatimWithItsContentTypeAndEveryOverrideIsAnExtension,AddressableSinkIT	spec.ceOverrides not sent	sed -i 's/      extensions.putAll(task.getSpec().getCeOverrides().getExtensions());/      \/\/ broken/' $D/sink/SinkDeliveryStarter.java
celname	it	CrdOnRealApiServerIT	the CRD's CEL rule on extension names gone	sed -i "s/  @ValidationRule(value = \"self.all(k, k.matches('\" + NAME_SHAPE + \"'))\",/  @ValidationRule(value = \"true\",/" $D/api/v1alpha1/CeOverrides.java
sinkuri	unit	TaskDeciderTest	status.sinkUri not written	sed -i 's/      desired.setSinkUri(outcome.url());/      \/\/ broken/' $D/sink/DeliveryDecisions.java
address	it	AddressableSinkIT	an Addressable's status.address.url never read	sed -i 's/    Optional<String> address = address(found);/    Optional<String> address = Optional.empty();/' $D/sink/Addressables.java
readysink	unit	ReadinessTest	a sink task's Ready message written for a Job	sed -i 's/new Verdict(false, true, false, status.getJobName() != null/new Verdict(false, true, false, true/' $D/task/Readiness.java
healthsink	unit	ArgoCdHealthTest	health.lua speaks of a Job for a sink task	sed -i 's/  if obj.status.jobName ~= nil then/  if true then/' argocd/resource_customizations/delayedtask.io/DelayedTask/health.lua
guard	netns	LinkLocalSinkIT	the sink's address guard allows everything	perl -0pi -e 's/(    String shown = text\(address\);\n)/    if (true) {\n      return Optional.empty();\n    }\n$1/' $D/sink/AddressGuard.java
maxima	unit	SpecValidatorTest,TaskDeciderTest	startingDeadlineSeconds and ttlSecondsAfterFinished not bounded above by the operator (issue 23, 7)	sed -i 's/return seconds != null \&\& (seconds < 0 || seconds > DelayedTaskSpec.MAX_SECONDS);/return seconds != null \&\& seconds < 0;/' $D/task/SpecValidator.java
overflow	unit	TaskDeciderTest	a deadline or TTL beyond Instant's range throws in every decision (issue 23, 7)	sed -i 's/      return seconds >= 0 ? Instant.MAX : Instant.MIN;/      throw e;/' $D/task/Times.java
payloadsize	unit	SpecValidatorTest	payload keys and value lengths not bounded by the operator (issue 23, 6)	sed -i -e 's/payload.size() > DelayedTaskSpec.PAYLOAD_MAX_KEYS/false/' -e 's/entry.getValue().length() > DelayedTaskSpec.PAYLOAD_MAX_VALUE_LENGTH/false/' $D/task/SpecValidator.java
templatesize	unit	LenientReadingTest	a jobTemplate of any size kept in memory (issue 23, 6)	sed -i 's/        if (bytes > largest) {/        if (false) {/' $D/api/v1alpha1/LenientDeserializer.java
crdmaxima	it	CrdOnRealApiServerIT	the CRD without its maxima on startingDeadlineSeconds and ttlSecondsAfterFinished	sed -i '/maximum: 3.1536E8/d' crds/delayedtasks.delayedtask.io-v1.yml
crdpayload	it	CrdOnRealApiServerIT	the CRD without its payload rules	perl -0pi -e 's/                maxProperties: 64\n//; s/self.all\(k, size\(self\[k\]\) <= 4096\)/true/; s/self.all\(k, k.matches[^"]*"/true"/' crds/delayedtasks.delayedtask.io-v1.yml
dryrun	it	JobTemplateDryRunIT	no dry run of a Job task's Job when it is scheduled (issue 24, 4)	sed -i 's/    if (needsJobCheck(draft)) {/    if (false \&\& needsJobCheck(draft)) {/' $D/reconcile/TaskDecider.java
dryrunblocks	it	ApiServerFaultIT#aDryRunWithoutAVerdictSchedulesTheTaskAndARefusalMakesItInvalid	a dry run without a verdict (5xx, 429) taken as a refusal (issue 24, 4)	sed -i 's/      if (ApiErrors.isTransient(e)) {/      if (false \&\& ApiErrors.isTransient(e)) {/' $D/reconcile/DelayedTaskReconciler.java
dryrunonce	unit	TaskDeciderTest	a refused jobTemplate not remembered: dry-run again on every reconcile, and the resync writes its entry (issue 24, 4)	sed -i 's/    return status != null \&\& status.getPhase() == Phase.Invalid \&\& generation != null/    return false \&\& status != null \&\& status.getPhase() == Phase.Invalid \&\& generation != null/' $D/task/TaskState.java
allowprefix	unit	AllowedUrisTest,SpecValidatorTest	the sink allowlist compared as a string prefix (issue 23)	perl -0pi -e 's/        \.filter\(entry -> entry\.forNamespace\(namespace\)\.map\(concrete -> concrete\.allows\(parsed\)\)\.orElse\(false\)\)/        .filter(entry -> url.startsWith(entry.text()))/' $D/config/AllowedUris.java
externalname	netns	SinkReachIT	an ExternalName Service followed without the allowlist (issue 23)	sed -i 's/    Optional<AllowedUris.Entry> entry = allowlist.entryAllowing(yields, namespace);/    Optional<AllowedUris.Entry> entry = allowlist.entries().stream().findFirst();/' $D/sink/Destinations.java
loopbackentry	unit	DestinationsTest	loopback allowed when any entry names loopback, not the one that allowed the URL (issue 23)	sed -i 's/    return new Resolution.Resolved(url, new Reach.ByName(Optional.empty(), entry.get().namesLoopback(), true), false);/    return new Resolution.Resolved(url, new Reach.ByName(Optional.empty(), allowlist.entries().stream().anyMatch(AllowedUris.Entry::namesLoopback), true), false);/' $D/sink/Destinations.java
foreignslice	netns	SinkReachIT	a Service whose EndpointSlices list an address that is no verified Pod of the namespace followed (issues 23, 32)	sed -i 's/          if (why.isPresent()) {/          if (false \&\& why.isPresent()) {/' $D/sink/EndpointCheck.java
tokenhttp	netns	SinkReachIT	a token sent over plain http to an ExternalName (issue 23)	sed -i 's/      if (!"https".equals(resolved.url().getScheme()) \&\& !resolved.inCluster()) {/      if (false) {/' $D/sink/SinkDeliveryStarter.java
handmade	unit	DestinationsTest#anEndpointIsVerifiedByThePodItNamesNeverByTheSlicesLabelsOrTargetRefAlone	an endpoint whose targetRef names a Pod of the namespace believed whatever that Pod's address (issues 23, 32)	sed -i 's/    if (!podIps(pod.get()).contains(ip.get())) {/    if (false) {/' $D/sink/EndpointCheck.java
connectcheck	unit	OkHttpSenderTest	the connect-time check (ConnectCheck) never refuses (issues 23, 32)	sed -i 's/    if (refused.isPresent()) {/    if (false \&\& refused.isPresent()) {/' $D/sink/ConnectCheck.java
guardforms	unit	AddressGuardTest	NAT64 local-use, SIIT and Teredo addresses judged as themselves, not the IPv4 addresses they carry (issue 32)	sed -i 's/    if (Arrays.equals(bytes, 0, 6, NAT64_LOCAL_PREFIX, 0, 6)) {/    if (false) {/; s/    boolean teredo = bytes\[0\] == 0x20/    boolean teredo = false \&\& bytes[0] == 0x20/; s/    if (mapped || compatible || translated || nat64) {/    if (mapped || compatible || nat64) {/' $D/sink/AddressGuard.java
headervalue	unit	OkHttpSenderTest#aHeaderValueWithALineBreakIsNamedNeverRepeated	a header value with a line break repeated into the status (OkHttp's message) (issue 32)	sed -i 's/        header(builder, header.getKey(), header.getValue());/        builder.header(header.getKey(), header.getValue());/' $D/sink/OkHttpSender.java
dialjudge	unit	ServiceEndpointsDialTest#anEndpointAddedWhileTheAttemptWaitsForASlotIsJudgedBeforeItIsDialled	the sender trusts what the destination resolved to before the wait for a slot: a Service's endpoints not judged when connecting (issue 32, 1)	perl -0pi -e 's/      if \(now.unverified\(\).isPresent\(\)\) \{\n        slot.release\(\);/      if (false) {\n        slot.release();/' $D/sink/OkHttpSender.java \&\& sed -i 's/    if (now.unverified().isPresent()) {/    if (false) {/' $D/sink/EndpointDns.java
tokenkey	it	ServiceAccountTokensIT	the token cache keyed by audience only, not namespace and audience (issue 23)	sed -i 's/  private record Key(String namespace, String audience) {}/  private record Key(String namespace, String audience) { public boolean equals(Object o) { return o instanceof Key k \&\& k.audience.equals(audience); } public int hashCode() { return audience.hashCode(); } }/' $D/sink/ServiceAccountTokens.java
nat64	unit	AddressGuardTest	metadata addresses in NAT64 form not refused (issue 23)	sed -i 's/    boolean nat64 = Arrays.equals(bytes, 0, 12, NAT64_PREFIX, 0, 12);/    boolean nat64 = false;/' $D/sink/AddressGuard.java
reflabel	unit	SpecValidatorTest	sink.ref.name not checked to be a DNS label by the operator (issue 23)	sed -i 's/      if (!DNS_LABEL.matcher(ref.getName()).matches()) {/      if (false) {/' $D/task/SpecValidator.java
audience	it	AdmissionPolicyIT#withoutTokenRightsATaskWithAnAudienceIsRefusedWithAMessageSayingWhatToDo+whoeverMayCreateTheSendersTokensMayWriteATaskWithAnAudienceAndNoOneElseMayPatchOneIn	the audience rule removed from the admission policy (issue 23)	sed -i 's/    - expression: "!has(object.spec.sink) || !has(object.spec.sink.audience) || authorizer/    - expression: "true || authorizer/' helm/delayed-task-operator/templates/admission-policy.yaml
warn	it	AdmissionPolicyIT	the policies' bindings only warn (validationActions: [Warn]) (issue 23)	sed -i 's/  validationActions: \[Deny\]/  validationActions: [Warn]/' helm/delayed-task-operator/templates/admission-policy.yaml
statuswriter	it	AdmissionPolicyIT#statusWritesByAnyoneButTheOperatorAreRefusedWithAMessage	anyone may write a task's status (issue 23)	sed -i 's/    - expression: "request.userInfo.username == variables.operator || request.userInfo.username in variables.statusWriters || /    - expression: "true || /' helm/delayed-task-operator/templates/admission-policy.yaml
failopen	it	AdmissionPolicyMissingIT	the operator fails open: the admission policy counts as present when missing (issue 23)	sed -i 's/^  public Optional<String> missing() {$/  public Optional<String> missing() {\n    if (true) {\n      return Optional.empty();\n    }/' $D/reconcile/AdmissionPolicies.java
failopenunit	unit	TaskDeciderTest	the decision ignores a missing admission policy (issue 23)	sed -i 's/    if (draft.facts.admissionHold()) {/    if (false) {/' $D/reconcile/TaskDecider.java && sed -i 's/      if (draft.admissionPolicyMissing() \&\& /      if (false \&\& /' $D/sink/DeliveryDecisions.java
layoutsink	unit	LayoutTest	sink/ imports reconcile/ (the delivery's decisions reach back for the reconciler's Plan) (issue 24, 7)	sed -i 's/^public final class DeliveryDecisions {/public final class DeliveryDecisions {\n  static final Class<?> PLAN = io.delayedtask.operator.reconcile.Plan.class;/' $D/sink/DeliveryDecisions.java
httpidle	unit	HttpEndpointsTest	no read timeout on the metrics and probe server (issue 23)	sed -i '/new ReadTimeoutHandler(readTimeout.toMillis(), TimeUnit.MILLISECONDS)/d' $D/http/HttpEndpoints.java
claimtwice	it	StandaloneRedisScheduleIT#claimAcknowledgeAndReleaseRoundTrip+fourConcurrentClaimersClaimEachOfTenThousandEntriesExactlyOnce+pollerHandsDueEntriesToTheHandlerAndAcknowledgesThem,ScheduleModelPropertiesIT	claim.lua leaves claimed ids in the due set (fire twice)	sed -i "/^  redis.call('ZREM', KEYS\[1\], unpack(ids))$/d" src/main/resources/lua/claim.lua
claimearly	it	StandaloneRedisScheduleIT#nothingIsClaimedBeforeItsScoreByTheRedisClock,ScheduleModelPropertiesIT	claim.lua claims up to 2 s early (fire early)	sed -i "s/redis.call('ZRANGEBYSCORE', KEYS\[1\], '-inf', now, 'WITHSCORES'/redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + 2000, 'WITHSCORES'/" src/main/resources/lua/claim.lua
leaselapse	it	StandaloneRedisScheduleIT#anExpiredLeaseReturnsTheEntryAtItsOriginalDueTime,ScheduleModelPropertiesIT	claim.lua leases 1000 times too long (a lease never lapses)	sed -i 's/^  local deadline = now + lease$/  local deadline = now + lease * 1000/' src/main/resources/lua/claim.lua
acktoken	it	StandaloneRedisScheduleIT#anOldClaimsAckOrReleaseLeavesItsSuccessorsClaimOfTheSameDueTimeAlone,ScheduleModelPropertiesIT	ack.lua's token comparison always true (a late ack drops its successor's claim)	sed -i "s/  if redis.call('HGET', KEYS\[3\], ARGV\[i\]) == ARGV\[i + 1\] then/  if true then/" src/main/resources/lua/ack.lua
requeue	it	StandaloneRedisScheduleIT#aNewLeaderTakesOverEveryClaimAtOnceLeaseOrNot,LeaderKillIT#standbyFiresAllOnceWhenTheLeaderIsKilledRightAfterClaiming	requeue.lua drops the claims it takes over instead of returning them (no ZADD NX)	sed -i "/^  redis.call('ZADD', KEYS\[1\], 'NX', due, id)$/d" src/main/resources/lua/requeue.lua
tokenaudience	it	ServiceAccountTokensIT,SinkDeliveryIT#anAudienceSendsTheSenderServiceAccountsTokenForExactlyThatAudience	every token requested for audience kubernetes, not sink.audience	sed -i 's/.withAudiences(key.audience())/.withAudiences("kubernetes")/' $D/sink/ServiceAccountTokens.java
delivmetric	it	SinkDeliveryIT#everyDeliveryAttemptCountsOnMetricsByItsOutcome	delayedtask_deliveries_total never incremented (the reconciler's call removed)	sed -i '/^      plan.deliveryMetric().ifPresent(metrics::delivery);$/d' $D/reconcile/DelayedTaskReconciler.java
timeout	it	SinkDeliveryIT#aReceiverThatNeverAnswersIsCutByTheTimeoutAndRetried	delivery.timeout ignored: always the 10 s default	sed -i 's/parseOr(spec.getTimeout(), DEFAULT_TIMEOUT));/DEFAULT_TIMEOUT);/' $D/sink/DeliverySettings.java
cacerts	it	SinkDeliveryIT#anHttpsSinkIsTrustedThroughTheTasksCaCerts	sink.caCerts ignored: the request carries no certificates	sed -i 's/Optional.ofNullable(destination.getCaCerts())/Optional.empty()/' $D/sink/SinkDeliveryStarter.java
claimlease	it	ClaimLeaseIT	DELAYEDTASK_CLAIM_LEASE_SECONDS ignored: the poller's lease hard-coded at 60 s	sed -i 's/SchedulePoller.Settings.defaults().withLease(claimLease)/SchedulePoller.Settings.defaults().withLease(java.time.Duration.ofSeconds(60))/' $D/ScheduleWiring.java
firedmetric	it	LifecycleIT#servesMetricsHealthAndReadiness	delayedtask_fired_total not counted when a claim settles	sed -i '/^      metrics.outcome(settle.outcome());$/d' $D/reconcile/DelayedTaskReconciler.java
linear	it	SinkDeliveryIT#aLinearBackoffGrowsByTheDelayNotByDoubling	backoffPolicy: linear ignored (always exponential)	sed -i 's/"linear".equals(spec.getBackoffPolicy())/false/' $D/sink/DeliverySettings.java
gcowner	it	GarbageCollectionIT#aJobOfALiveTaskIsNotCollected	a Job owned by a ConfigMap of the task's uid (an owner the collector cannot find)	sed -i 's/.withKind(task.getKind())/.withKind("ConfigMap")/; s/.withApiVersion(task.getApiVersion())/.withApiVersion("v1")/' $D/task/JobFactory.java
deadline	it	FirstSecondsOfLeadershipIT,LifecycleIT#pastItsStartingDeadlineItIsMissed	startingDeadlineSeconds ignored: a late task fires	sed -i 's/    if (deadline != null \&\& claim.claimedAt().isAfter(Times.plusSecondsCapped(due, deadline))) {/    if (false \&\& deadline != null \&\& claim.claimedAt().isAfter(Times.plusSecondsCapped(due, deadline))) {/' $D/reconcile/TaskDecider.java
logpassword	it	RedisLogsIT	the Redis password in a debug line	perl -0pi -e 's/(  static RedisURI redisUri\(String uri, Optional<String> password, Duration timeout\) \{\n)/$1    org.slf4j.LoggerFactory.getLogger(RedisConnections.class).debug("connecting with {}", password);\n/' $D/schedule/RedisConnections.java
logonce	it	RedisLogsIT	Redis's state logged at every probe, not once per change	sed -i 's/    if (before == null || before != now) {/    if (true) {/' $D/leader/ScheduleKeeper.java
bodylogged	it	SinkDeliveryIT#aFailedAttemptIsADeliveryFailedWarningAndTheAnswerBodyGoesNowhere	the answer body read and logged at debug	perl -0pi -e 's/(        try \(response\) \{\n)/$1          try { org.slf4j.LoggerFactory.getLogger(OkHttpSender.class).debug("answer {}", response.peekBody(4096).string()); } catch (java.io.IOException e) { }\n/' $D/sink/OkHttpSender.java
maxinflight	it	SinkDeliveryIT#atMostMaxInFlightRequestsAreOpenAtOnceWhateverThePerHostCap	DELAYEDTASK_SINK_MAX_IN_FLIGHT ignored (no global cap on the slots)	sed -i 's/    this.slots = new DeliverySlots(config.maxInFlight(), /    this.slots = new DeliverySlots(Integer.MAX_VALUE, /' $D/sink/OkHttpSender.java
nscap	unit	OkHttpSenderTest	no per-namespace cap on open deliveries (issue 23, 5)	sed -i 's/ || ofNamespace >= perNamespace$//' $D/sink/DeliverySlots.java
reserve	unit	OkHttpSenderTest	no slots kept for lightly loaded namespaces: namespaces that hang fill the pool (issue 23, 5)	sed -i 's/    return open < max - reserve || ofNamespace < lightLoad;/    return true;/' $D/sink/DeliverySlots.java
slotwait	unit	OkHttpSenderTest	a request waiting for a slot waits without limit (issue 23, 5)	sed -i 's/        waiter.expiry = timer.schedule(() -> expire(waiter), Math.max(0, maxWait.toNanos()), TimeUnit.NANOSECONDS);/        waiter.expiry = timer.schedule(() -> expire(waiter), 1, TimeUnit.DAYS);/' $D/sink/DeliverySlots.java
backofffloor	unit	SpecValidatorTest	backoffDelay below 100ms accepted by the operator (issue 23, 5)	sed -i 's/    if (delivery.getBackoffDelay() != null \&\& shorterThan(delivery.getBackoffDelay(), MIN_BACKOFF_DELAY)) {/    if (false) {/' $D/task/SpecValidator.java
crdbackoff	it	CrdOnRealApiServerIT	the CRD without its backoffDelay floor	sed -i 's/duration(.100ms.)/duration(\x270s\x27)/' crds/delayedtasks.delayedtask.io-v1.yml
failopenwiring	it	AdmissionPolicyMissingIT	the reconciler never tells the decision the policy is missing (issue 23)	sed -i 's/        deliveries.inFlight(id), Optional.empty()).withAdmission(admissionPolicies.judge(task))$/        deliveries.inFlight(id), Optional.empty()).withAdmission(new AdmissionPolicies.Verdict.Admitted(Optional.empty()))/' $D/reconcile/DelayedTaskReconciler.java
notadmitted	unit	AdmissionPoliciesTest	a spec written while the admission policy was missing counts as admitted	sed -i 's/^    return new Verdict.NotAdmitted(/    if (true) {\n      return new Verdict.Admitted(record);\n    }\n    return new Verdict.NotAdmitted(/' $D/reconcile/AdmissionPolicies.java
notadmittedit	it	AdmissionPolicyMissingIT	a spec written while the admission policy was missing counts as admitted (end to end)	sed -i 's/^    return new Verdict.NotAdmitted(/    if (true) {\n      return new Verdict.Admitted(record);\n    }\n    return new Verdict.NotAdmitted(/' $D/reconcile/AdmissionPolicies.java
policyname	unit	AdmissionPoliciesTest	the cluster's policy matched to the shipped one by name, not by its rules	sed -i 's/filter(e -> e.getValue().equals(form.get()))/filter(e -> e.getKey().equals(policy.getMetadata().getName()))/' $D/reconcile/ShippedPolicies.java
policynameit	it	AdmissionPolicyMissingIT#aBindingThatOnlyWarnsAPolicyThatFailsOpenOrRulesChangedCountAsMissing	the cluster's policy matched to the shipped one by name (end to end)	sed -i 's/filter(e -> e.getValue().equals(form.get()))/filter(e -> e.getKey().equals(policy.getMetadata().getName()))/' $D/reconcile/ShippedPolicies.java
failignore	unit	AdmissionPoliciesTest	a policy with failurePolicy Ignore counts as present	sed -i 's/      if (failurePolicy != null \&\& !"Fail".equals(failurePolicy)) {/      if (false) {/' $D/reconcile/AdmissionPolicies.java
forgedrecord	unit	AdmissionPoliciesTest	any status.admission believed, not only the operator's signed record of this generation	sed -i 's/    if (record.isPresent() \&\& record.get().equals(written)) {/    if (written != null) {/' $D/reconcile/AdmissionPolicies.java
conditionsmap	unit	GeneratedCrdTest,CrdCopiesTest,CrdDriftTest	status.conditions not a map list (the post-processing step skipped)	sed -i 's/^        conditionsAsMapList(conditions);/        \/\/ broken/' src/build/java/io/delayedtask/operator/api/PrinterColumnOrder.java
conditionsdup	unit	ConditionsTest	a copied status keeps two conditions of one type, which the map list refuses	sed -i 's/      if (c.getType() == null || !types.add(c.getType())) {/      if (false) {/' $D/task/Conditions.java
crdskeep	unit	HelmChartTest	crds.keep=false still annotates the CRD helm.sh/resource-policy: keep	sed -i 's/{{- if $.Values.crds.keep }}/{{- if true }}/' helm/delayed-task-operator/templates/crd.yaml
crdsenabled	unit	HelmChartTest	crds.enabled=false still renders the CRD	sed -i 's/{{- if .Values.crds.enabled }}/{{- if true }}/' helm/delayed-task-operator/templates/crd.yaml
killstandby	it	LeaderKillIT#standbyFiresAllOnceWhenTheLeaderIsKilledAtTheInstantTheyFallDue	(test side) the standby killed instead of the leader	sed -i 's/^    Killed killed = kill(leader, lab);/    Killed killed = kill(standby, lab);/' $T/faults/LeaderKillIT.java
exampleretry	it	ExampleTasksIT	the retry example no longer retries (retry: 0): its comment's promise broken	sed -i 's/^    retry: 3$/    retry: 0/' k8s/examples/sink-retry.yaml
firedtime	it	SinkDeliveryIT#twoFailuresThenSuccessAreThreeRequestsWithOneIdSpacedByTheBackoffAndRetryAfter	firedTime moved to each retry's attempt, not kept at the first	sed -i 's/^    if (desired.getFiredTime() == null) {$/    if (true) {/' $D/sink/DeliveryDecisions.java
deliveryevent	it	SinkDeliveryIT#aFailedAttemptIsADeliveryFailedWarningAndTheAnswerBodyGoesNowhere	no DeliveryFailed Event for an attempt that will be retried	perl -0pi -e 's/\Q      return DeliveryPlan.recorded(new ScheduleChange.Write(outcome.redisTimeAtEnd().plus(wait)), DeliveryCount.RETRY,\E\n\Q          TaskEvent.warning(DELIVERY_FAILED, what + "; retrying in " + wait.toMillis() + " ms"));\E/      return new DeliveryPlan(Optional.of(new ScheduleChange.Write(outcome.redisTimeAtEnd().plus(wait))), Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(DeliveryCount.RETRY), java.util.List.of());/' $D/sink/DeliveryDecisions.java
dlsretry	it	SinkDeliveryIT#theDeadLetterSinkIsRetriedUnderTheSameRulesWithErrorCodeZeroWhenNoAnswerCame	the dead-letter sink tried once, not under the sink's retry rules	sed -i 's/        \&\& attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) < perTarget) {/        \&\& attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) < 1) {/' $D/sink/DeliveryDecisions.java
dlscode	it	SinkDeliveryIT#theDeadLetterSinkIsRetriedUnderTheSameRulesWithErrorCodeZeroWhenNoAnswerCame	ce-delayedtaskerrorcode 500, not 0, when the sink gave no answer	sed -i 's/getResponseCode()).orElse(0));/getResponseCode()).orElse(500));/' $D/sink/DeliveryDecisions.java
deadlineretry	it	SinkDeliveryIT#startingDeadlineSecondsBoundsOnlyTheFirstAttempt	startingDeadlineSeconds also bounds the retries (a retry after it is dropped)	perl -0pi -e 's/(    Optional<ClaimedEntry> claim = draft.claim\(\);\n)(    return claim.isPresent\(\) \? sendNext)/$1    Long limit = draft.task().getSpec().getStartingDeadlineSeconds();\n    if (claim.isPresent() \&\& limit != null \&\& claim.get().claimedAt().isAfter(due.plusSeconds(limit))) {\n      return DeliveryPlan.claim(ClaimVerdict.Settle.stale());\n    }\n$2/' $D/sink/DeliveryDecisions.java
linklocal6	netns	LinkLocalSinkIT	IPv6 link-local addresses not refused (IPv4's still are)	sed -i 's/^    if (judged.isLinkLocalAddress()) {/    if (judged instanceof java.net.Inet4Address \&\& judged.isLinkLocalAddress()) {/' $D/sink/AddressGuard.java
loopbackguard	netns	LinkLocalSinkIT	loopback reached through a name that does not name it (no entry naming loopback allowed the URL)	sed -i 's/^    if (judged.isLoopbackAddress() \&\& !loopbackAllowed) {/    if (false) {/' $D/sink/AddressGuard.java
runatlength	unit	SpecValidatorTest	runAt and delay not bounded at 64 characters by the operator (the CRD's maxLength)	sed -i 's/^    if (when.length() > DelayedTaskSpec.MAX_LENGTH) {/    if (false) {/' $D/task/SpecValidator.java
crdrunat	it	CrdOnRealApiServerIT	the CRD's runAt maxLength 65, not 64	perl -0pi -e 's/( one of runAt and delay is set."\n)                maxLength: 64\n(                type: "string"\n                x-kubernetes-validations:\n                - message: "spec.runAt)/$1                maxLength: 65\n$2/' crds/delayedtasks.delayedtask.io-v1.yml
resynccallback	it	FirstSecondsOfLeadershipIT	a new leader's first resync run in the leader-election callback (before JOSDK handles any event)	perl -0pi -e 's/(    onActivate.forEach\(listener -> listener.accept\(first\)\);\n)    requestResync\(\);/$1    resyncWanted = true;\n    beat();/' $D/leader/ScheduleKeeper.java
netnslist	unit	LoopbackOnlyListTest	an IT that starts the operator not marked to run only in the loopback-only namespace	sed -i '/^@RequiresLoopbackOnlyNetwork$/d' $T/faults/BadInputIT.java
bigcache	it	JobTemplateDryRunIT#aTaskTooLargeToCacheWholeIsCheckedAndFiredFromAllOfIt	a large task decided from its trimmed cached copy (no payload, no jobTemplate)	sed -i 's/    if (!CachedObjects.isTrimmed(cached)) {/    if (true) {/' $D/reconcile/DelayedTaskReconciler.java
bigtrim	unit	LeanItemStoreTest	the task cache keeps large fields whatever their size	perl -0pi -e 's/    if \(spec == null \|\| task.getMetadata\(\) == null\n        \|\| largeFieldChars\(spec\) \+ annotationChars\(task.getMetadata\(\).getAnnotations\(\)\) <= KEEP_UP_TO_CHARS\) \{/    if (true) {/' $D/task/CachedObjects.java
eventrepeat	it	TaskEventsIT#aRepeatThisProcessWroteIsOnePatchAndOneFromAnotherWriterLosesNoCount	a repeated Event always created, refused, read and patched (4 requests), never patched from what this process wrote	sed -i 's/    if (known != null \&\& countUp(namespace, name, known, type, message, now, key)) {/    if (false \&\& known != null \&\& countUp(namespace, name, known, type, message, now, key)) {/' $D/reconcile/TaskEvents.java
claimturns	unit	ReconcileExecutorTest	claimed reconciles in arrival order, not namespaces in turn (a namespace with hundreds of retries holds another's due task back)	sed -i 's/    return runnable instanceof QueuedReconcile queued \&\& queued.task != null \&\& queued.task.getNamespace().isPresent()/    return false \&\& runnable instanceof QueuedReconcile queued \&\& queued.task != null \&\& queued.task.getNamespace().isPresent()/' $D/reconcile/QueuedReconcile.java
lateduplicate	it	SinkDeliveryIT#aDeliveredTaskSendsOneCloudEventWithEveryHeaderAndSucceeds	a second copy of each request sent a second later, after the task is Succeeded	sed -i 's/^    outcomes.sending(id);$/    java.util.concurrent.CompletableFuture.runAsync(() -> sender.send(request), java.util.concurrent.CompletableFuture.delayedExecutor(1, java.util.concurrent.TimeUnit.SECONDS));\n    outcomes.sending(id);/' $D/sink/SinkDeliveryStarter.java
handshakerace	it	RedisScheduleFailureIT#aWrongPasswordIsReportedAsSuchOnEveryConnectNotAsAnOutage	a connect whose handshake race hid Redis's answer not opened again (a wrong password reported as an outage)	sed -i 's/^  static final int ATTEMPTS = 5;/  static final int ATTEMPTS = 1;/' $D/schedule/HandshakeRace.java
outcomelane	unit	ReconcileExecutorTest	delivery outcomes' reconciles wait in arrival order with the rest (no lane of their own, no cap)	sed -i 's/    return holdsClaim.test(task) ? Lane.CLAIMED : awaitsOutcomeRecord.test(task) ? Lane.OUTCOME : Lane.OTHER;/    return holdsClaim.test(task) ? Lane.CLAIMED : Lane.OTHER;/' $D/reconcile/ReconcileExecutor.java
outcomecap	unit	ReconcileExecutorTest#onlyAFewOutcomesRunAtOnceWhateverTheThreadsAndTheRestStillRun	as many outcomes at once as there are threads	sed -i 's/^  static final int OUTCOMES_AT_ONCE = 4;/  static final int OUTCOMES_AT_ONCE = 1000;/' $D/reconcile/ReconcileLanes.java
signcontent	unit	SigningKeysTest,SignedDeliveryTest	the signed content without the timestamp ("<id>.<body>")	sed -i 's/byte\[\] prefix = (id + "." + timestamp + ".")/byte[] prefix = (id + ".")/' $D/sink/signing/SigningKeys.java
signnone	unit	SignedDeliveryTest	the sender drops the signature: a signed request sent unsigned	sed -i 's/    request.signing().ifPresent(keys -> keys.headers(/    request.signing().filter(k -> false).ifPresent(keys -> keys.headers(/' $D/sink/OkHttpSender.java
unsigned	unit	SinkDeliveryStarterTest#anAttemptThatCannotBeSignedIsNeverSentAndFailsNamingTheSecretAndTheFix	an attempt whose secret cannot be had sent unsigned	perl -0pi -e 's/        return new Preparation.Unsendable\(url, "not sent, it could not be signed: " \+ e.getMessage\(\), true\);\n//' $D/sink/SinkDeliveryStarter.java
shortsecret	unit	SigningKeysTest	a secret shorter than 24 bytes accepted	sed -i 's/      if (secret.length < MIN_BYTES) {/      if (false) {/' $D/sink/signing/SigningKeys.java
secretinmessage	unit	SigningKeysTest#aBadValueIsRefusedNamingWhereAndTheFixNeverTheValue	a malformed secret quoted in the message	sed -i 's/      if (!part.startsWith(PREFIX)) {/      if (!part.startsWith(PREFIX)) { where = where + " (" + part + ")";/' $D/sink/signing/SigningKeys.java
rotation	it	SignedDeliveryIT#eachAttemptIsSignedAndTheAttemptAfterARotationCarriesTheNewSignature	a changed signing Secret not used: the parsed secrets kept whatever its resourceVersion	sed -i 's/    Parsed id = new Parsed(namespace, key, String.valueOf(secret.getMetadata().getResourceVersion()));/    Parsed id = new Parsed(namespace, key, "");/' $D/sink/signing/InformedSigningSecrets.java
dlssigning	unit	SinkDeliveryStarterTest#aSignedSinkHandsItsKeysToTheSenderAndTheDeadLetterSinkItsOwn	the dead-letter sink signs with the sink's key	sed -i 's/        signing = Optional.of(signingSecrets.keysFor(namespace, destination.getSigning().getKey(),/        signing = Optional.of(signingSecrets.keysFor(namespace, task.getSpec().getSink().getSigning().getKey(),/' $D/sink/SinkDeliveryStarter.java
signingpolicy	it	AdmissionPolicyIT#withoutGetOnTheSigningSecretATaskThatSignsIsRefusedNamingTheUserTheRightAndTheField	the sink.signing rule removed from the chart's admission policy	sed -i 's/    - expression: "!has(object.spec.sink) || !has(object.spec.sink.signing) || /    - expression: "true || /' helm/delayed-task-operator/templates/admission-policy.yaml
signingfailopen	unit	TaskDeciderTest#withoutTheAdmissionPolicyASignedSinkSendsNothingAndWaits	a signed sink sent while the admission policy is missing	sed -i 's/      if (draft.admissionPolicyMissing() \&\& draft.task().getSpec().getSink().getSigning() != null) {/      if (false) {/' $D/sink/DeliveryDecisions.java
signingget	unit	HelmChartTest	the chart grants get on the signing Secret, which the operator never uses	perl -0pi -e 's/(resourceNames: \[\{\{ .Values.sink.signingSecret \| quote \}\}\]\n  verbs: \[)"list"/$1"get", "list"/' helm/delayed-task-operator/templates/_helpers.tpl
secretlogged	it	SignedDeliveryIT	the signing secret logged (at debug) when parsed	sed -i 's/^    SigningKeys keys = SigningKeys.parse(value, where, fix);/&\n    LOG.debug("signing secret of {}: {}", where, value);/' $D/sink/signing/InformedSigningSecrets.java
firenowonce	unit	FireNowDecisionsTest	the fire-now value acted on not recorded in status.fireNowHandled (it would fire again)	sed -i 's/^        desired.setFireNowHandled(fireNow.value());/        \/\/ broken/' $D/reconcile/TaskDecider.java
firenowfinished	unit	FireNowDecisionsTest	a fire-now on a task that fired already fires it again	sed -i 's/ \&\& !FireNow.firedFor(draft.current, due)) {/) {/' $D/reconcile/TaskDecider.java
firenowsuspended	unit	FireNowDecisionsTest	the resync drops a suspended task's fire-now entry	sed -i 's|      return Optional.of(at.due()); // fires at once, suspended or not|      return Optional.empty();|' $D/task/TaskState.java
firenowwatch	unit	FireNowDecisionsTest	a change of the fire-now annotation reconciles nothing (generation only)	sed -i 's/^    return !Objects.equals(FireNow.annotation(newTask), FireNow.annotation(oldTask));/    return false;/' $D/reconcile/TaskUpdates.java
firenowwiring	it	LifecycleIT#theFireNowAnnotationFiresASuspendedTaskOnceAndAMalformedOneFiresNothing	the operator reconciles on a new generation only (JOSDK's generation-aware filter), so the fire-now annotation is never seen	sed -i 's/^        c.withOnUpdateFilter(new TaskUpdates());/        c.withGenerationAware(true);/' $D/DelayedTaskOperator.java
queuerate	it	QueueCrdOnRealApiServerIT	the queue CRD's bounds on maxDispatchesPerSecond gone	sed -i 's/  @ValidationRule(value = "self > 0.0 \&\& self <= 10000.0",/  @ValidationRule(value = "true",/' $D/api/v1alpha1/DelayedTaskQueueSpec.java
dtorder	it	KubectlDtIT#listShowsTheTasksInDueOrderWithCountdownPhaseKindQueueAndWhyEachWaits,KubectlDtIT#theGoUnitTestsPass	kubectl dt list sorts the latest due first	sed -i 's/\t\t\treturn a.due.Before(b.due)/\t\t\treturn a.due.After(b.due)/' kubectl-dt/task.go
dtqueued	it	KubectlDtIT#listShowsTheTasksInDueOrderWithCountdownPhaseKindQueueAndWhyEachWaits,KubectlDtIT#theGoUnitTestsPass	kubectl dt list ignores the Queued condition (a task held by its queue shows no reason)	sed -i 's/q.Status == "True" \&\& q.Reason != ""/q.Status == "Never" \&\& q.Reason != ""/' kubectl-dt/task.go
deadletternumber	unit	TaskDeciderTest#aPermanentErrorOnTheFirstAttemptGivesTheDeadLetterSinkItsOwnAttemptsOneToFour	the dead-letter sink's attempts numbered from the sink's retry + 1, not from the sink's last attempt (a 400 on attempt 1 of 4 sent attempt -2, seven times)	sed -i -e 's/int deadLetterAttempt = attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) + 1;/int deadLetterAttempt = attempts + 1 - perTarget;/' -e 's/\&\& attempts - sinkAttempts(draft.current(), perTarget).orElse(attempts) < perTarget) {/\&\& attempts < 2 * perTarget) {/' -e 's/: outcome.attempt() - sinkAttempts(draft.current(), perTarget).orElse(perTarget);/: outcome.attempt() - perTarget;/' $D/sink/DeliveryDecisions.java
norelease	it	LeaderKillIT#sigtermHandsOverWithinASecondAndReleasesTheLease	a leader stopped by SIGTERM keeps its Lease until it runs out (no release)	sed -i 's/          handover.release();/          \/\/ broken/' $D/DelayedTaskOperator.java
longlease	it	LeaderKillIT#sigkillWithTheDefaultLeaseCostsAtMostFiveSecondsOfFiring	the old default Lease (15 s): a SIGKILLed leader costs about 15 s of firing	sed -i 's/  public static final int DEFAULT_LEASE_SECONDS = 4;/  public static final int DEFAULT_LEASE_SECONDS = 15;/' $D/config/OperatorConfig.java
ambiguouspath	unit	AllowedUrisTest	a path a receiver reads as another ('..;', %2F, %5C, %252e) allowed under an entry's path	sed -i 's/      if (ambiguousPath(url).isPresent()) {/      if (false \&\& ambiguousPath(url).isPresent()) {/' $D/config/AllowedUris.java
nsentry	unit	AllowedUrisTest	{namespace} in an entry never replaced by the task's namespace	sed -i 's/      if (!perNamespace()) {/      if (true) {/' $D/config/AllowedUris.java
addressablewall	unit	DestinationsTest	an Addressable's address used whatever it names (no walls of an absolute URL)	sed -i 's/      return addressable(namespace, service, addressables.resolve(/      return java.util.function.Function.<Resolution>identity().apply(addressables.resolve(/' $D/sink/Destinations.java
refkind	unit	SpecValidatorTest	a ref to a kind that is no Addressable is valid	sed -i 's/          instanceof RefKinds.Verdict.Refused refused) {/          instanceof RefKinds.Verdict.Refused refused \&\& false) {/' $D/task/SpecValidator.java
builtinkind	unit	DestinationsTest	a built-in kind (Job, EndpointSlice, DelayedTask) asked about like any other	sed -i 's/    if (group.isEmpty() || !group.contains(".") || group.endsWith(".k8s.io") || group.equals("delayedtask.io")) {/    if (false) {/' $D/sink/Addressables.java
hostshare	unit	DeliverySlotsTest	one namespace may hold every slot of a shared host	sed -i 's/    this.perHostAndNamespace = Math.max(1, perHost \/ 2);/    this.perHostAndNamespace = perHost;/' $D/sink/DeliverySlots.java
leanannotations	unit	LeanItemStoreTest	annotations not counted towards a task's large fields	sed -i 's/        || largeFieldChars(spec) + annotationChars(task.getMetadata().getAnnotations()) <= KEEP_UP_TO_CHARS) {/        || largeFieldChars(spec) <= KEEP_UP_TO_CHARS) {/' $D/task/CachedObjects.java
tracederive	unit	TaskTraceTest	a task without the annotation gets a random trace per attempt, not one derived from uid and due time	sed -i 's/    String traceId = HEX.formatHex(digest("delayedtask.trace " + key), 0, 16);/    String traceId = io.opentelemetry.sdk.trace.IdGenerator.random().generateTraceId();/' $D/task/TaskTrace.java
traceannotation	unit	TaskTraceTest	the delayedtask.io/traceparent annotation ignored	sed -i 's/    if (value != null) {/    if (false \&\& value != null) {/' $D/task/TaskTrace.java
attemptspan	unit	TaskTraceTest,TracingTest	every attempt sent with the firing's span id, not one of its own	sed -i 's/    return SpanContext.create(firing.getTraceId(), HEX.formatHex(id),/    return SpanContext.create(firing.getTraceId(), firing.getSpanId(),/' $D/task/TaskTrace.java
jobinitenv	unit	TaskTraceTest#everyContainerOfTheJobCarriesTheFiringsContext	a Job's init containers without TRACEPARENT	sed -i 's/List.of(orEmpty(pod.getContainers()), orEmpty(pod.getInitContainers()))/List.of(orEmpty(pod.getContainers()))/' $D/task/JobFactory.java
traceoff	unit	TracingTest	the SDK and its exporter thread started without an exporter asked for	sed -i 's/    if (!wanted(env)) {/    if (false) {/' $D/trace/Tracing.java
firespanid	unit	TracingTest	the firing's span exported with a random id, not the one its attempts and Job name as parent	sed -i 's/    Span span = ChosenIds.with(firing.getTraceId(), firing.getSpanId(), builder::startSpan);/    Span span = builder.startSpan();/' $D/trace/Tracing.java
traceheader	it	TracingIT#eachAttemptIsASpanOfTheAnnotationsTraceAndTheReceiverSeesItsId	no traceparent header on a delivery attempt	sed -i '/    request.traceHeaders().forEach(builder::header);/d' $D/sink/OkHttpSender.java
traceinvalid	it	TracingIT#anInvalidAnnotationGetsOneWarningAndTheJobANewTraceInItsEnvironment	no Warning Event for an invalid delayedtask.io/traceparent	sed -i 's/    trace.invalidAnnotation().ifPresent(/    java.util.Optional.<String>empty().ifPresent(/' $D/reconcile/DelayedTaskReconciler.java
qpause	it	QueueClaimsIT#aPausedQueueHoldsItsDueTasksReportsThemOnceAndResumesOldestFirst	a paused queue's claim ignores the pause	sed -i "s/^if mode == 'paused' then/if false then/" src/main/resources/lua/queue-claim.lua
qrefill	it	QueueClaimsIT#twoOperatorsClaimingAtOnceStayWithinBurstPlusRateTimesTime	the token bucket refilled twice as fast as maxDispatchesPerSecond	sed -i 's|      tokens = tokens + (now - at) \* rate / 1000|      tokens = tokens + (now - at) * rate / 500|' src/main/resources/lua/queue-claim.lua
qorder	it	QueueClaimsIT#aPausedQueueHoldsItsDueTasksReportsThemOnceAndResumesOldestFirst+concurrencySlotsAreTakenByClaimsAndFreedWhenTheDispatchEnds	a queue claims the youngest due entries first	sed -i "s/  claims = redis.call('ZRANGEBYSCORE', KEYS\[1\], '-inf', now, 'WITHSCORES', 'LIMIT', 0, allowed)/  claims = redis.call('ZREVRANGEBYSCORE', KEYS[1], now, '-inf', 'WITHSCORES', 'LIMIT', 0, allowed)/" src/main/resources/lua/queue-claim.lua
qslot	it	QueueClaimsIT#concurrencySlotsAreTakenByClaimsAndFreedWhenTheDispatchEnds	a dispatch's end never frees its concurrency slot	sed -i "s/^local freed = redis.call('ZREM', KEYS\[1\], unpack(ARGV))/local freed = 0/" src/main/resources/lua/queue-free.lua
qtakeover	it	QueueClaimsIT#aNewLeaderTakesOverTheQueueClaimsAtOnceWithTheirSlotsFreed+aNewLeaderOfAPausedQueueRequeuesTheClaimsAndFreesTheirSlots	a new leader leaves a queue's claims to their lease	sed -i "s/^local takeover = ARGV\[10\] == 'takeover'/local takeover = false/" src/main/resources/lua/queue-claim.lua
qtakeoverslot	it	QueueClaimsIT#aNewLeaderTakesOverTheQueueClaimsAtOnceWithTheirSlotsFreed+aNewLeaderOfAPausedQueueRequeuesTheClaimsAndFreesTheirSlots	a new leader requeues a queue's claims but keeps their slots	sed -i "/^    redis.call('ZREM', KEYS\[7\], unpack(expired))$/d" src/main/resources/lua/queue-claim.lua
qfirenowqueue	it	QueueIT#fireNowFiresATaskItsPausedQueueHoldsOncePerValue	a fire-now is held by the task's paused queue (its entry written to the queue, not the shard)	sed -i 's/    return firingNow ? Optional.empty() : named(task);/    return named(task);/' $D/leader/TaskQueues.java
qdeadline	it	QueueIT#aDeadlinePassingWhileItsQueueIsPausedMakesTheTaskMissedWhenTheQueueLetsItGo	a queue's claim stamped with the entry's due time, not the Redis clock (the wait in the queue does not count against startingDeadlineSeconds)	perl -0pi -e 's/\Qinstant(string(result.get(i + 1))), time,\E/instant(string(result.get(i + 1))), instant(string(result.get(i + 1))),/' $D/schedule/RedisSchedule.java
qanswerslot	it	QueueIT#deliveriesToASinkThatHangsHoldTheirSlotsUntilAnsweredOrTimedOut	a delivery attempt's answer (or timeout) never frees its queue slot	sed -i 's/    boolean answered = facts.delivery().isPresent() \&\& plan.deliveryMetric().isPresent();/    boolean answered = false;/' $D/reconcile/DelayedTaskReconciler.java
qjobslot	it	QueueIT#aJobThatFailsOrIsDeletedFreesItsSlotAtOnce+aConcurrencyOfOneRunsTheNextJobOnlyWhenTheFirstFinishes	a Job that ends (Complete, Failed, deleted) never frees its queue slot	sed -i 's/    boolean jobEnded = before != null \&\& before.getPhase() == Phase.Running/    boolean jobEnded = false \&\& before != null \&\& before.getPhase() == Phase.Running/' $D/reconcile/DelayedTaskReconciler.java
qbucketreset	it	QueueClaimsIT#fiveHundredTasksDueAtOnceStayWithinTheBoundAcrossALeaderChangeInTheMiddle	a new leader's takeover resets the queue's token bucket (full again)	sed -i "s/^local takeover = ARGV\[10\] == 'takeover'$/&\nif takeover then redis.call('HDEL', KEYS[6], 'tokens', 'at') end/" src/main/resources/lua/queue-claim.lua
qfloor	it	QueueBucketPropertiesIT	a claim takes a token it has only part of (ceil, not floor)	sed -i 's/    local whole = math.floor(tokens)/    local whole = math.ceil(tokens)/' src/main/resources/lua/queue-claim.lua
qburstcap	it	QueueBucketPropertiesIT,QueueClaimsIT#withoutMaxBurstTheBucketHoldsTheRateRoundedUpAndAtLeastOne	the token bucket not capped at maxBurst (an idle queue saves up tokens)	perl -0pi -e 's/    if tokens > burst then\n      tokens = burst\n    end\n//' src/main/resources/lua/queue-claim.lua
qdefaultburst	it	QueueClaimsIT#withoutMaxBurstTheBucketHoldsTheRateRoundedUpAndAtLeastOne	without maxBurst, a bucket of ten seconds' rate, not max(1, ceil(rate))	sed -i 's/    return (int) Math.max(1, Math.ceil(maxDispatchesPerSecond));/    return (int) Math.max(10, Math.ceil(maxDispatchesPerSecond * 10));/' $D/api/v1alpha1/DelayedTaskQueueSpec.java
qclockback	it	QueueBucketPropertiesIT	a Redis clock that went back refills the bucket (by the time it went back)	sed -i -e 's/    elseif now > at then/    elseif now ~= at then/' -e 's|      tokens = tokens + (now - at) \* rate / 1000|      tokens = tokens + math.abs(now - at) * rate / 1000|' src/main/resources/lua/queue-claim.lua
LIST
}

if [ $# -eq 0 ]; then
  breaks | awk -F'\t' '{printf "%-10s %-5s %s\n           breaks: %s\n", $1, $2, $3, $4}'
  exit 0
fi
# --check: every edit still applies to HEAD (seconds, no Maven), so a break the code moved away
# from is found before anyone needs it.
if [ "$1" = "--check" ]; then
  work=$(mktemp -d)
  git clone -q "$repo" "$work/main"
  cd "$work/main" || exit 1
  export D T
  stale=0
  while IFS=$'\t' read -r name _ _ what edit; do
    if ! bash -c "$edit" >/dev/null 2>&1 || git diff --quiet; then
      echo "EDIT DID NOT APPLY: $name ($what)"
      stale=$((stale + 1))
    fi
    git checkout -q -- . && git clean -qfd
  done < <(breaks)
  echo "$(breaks | wc -l) breaks, $stale whose edit no longer applies"
  rm -rf "$work"
  [ $stale -eq 0 ]; exit
fi
mkdir -p "$out"
for name in "$@"; do
  line=$(breaks | grep -P "^$name\t") || { echo "no break named $name (run without arguments for the list)" >&2; exit 2; }
  IFS=$'\t' read -r _ kind tests what edit <<<"$line"
  work=$(mktemp -d)
  git clone -q "$repo" "$work/main"
  (
    cd "$work/main" || exit 1
    export D T
    bash -c "$edit" && ! git diff --quiet || { echo "EDIT DID NOT APPLY: $name ($what)" | tee "$out/$name.log"; exit 1; }
    git diff > "$out/$name.diff"
    start=$(date +%s)
    case "$kind" in
      unit) mvn -B -o -DskipControlPlane -DskipTestPackages test -Dtest="$tests" > "$out/$name.out" 2>&1 ;;
      it|netns)
        # A test of pom.xml's loopbackOnlyITs runs only in the loopback-only execution (RequiresLoopbackOnlyNetwork
        # skips it anywhere else): select it there with -DloopbackOnlyITs, the others with -Dit.test.
        netns=$(sed -n 's:.*<loopbackOnlyITs>\(.*\)</loopbackOnlyITs>.*:\1:p' pom.xml)
        inns=() outns=()
        IFS=, read -ra selected <<<"$tests"
        for t in "${selected[@]}"; do
          if [[ ",$netns," == *",${t%%#*},"* ]]; then inns+=("$t"); else outns+=("$t"); fi
        done
        if [ ${#inns[@]} -gt 0 ]; then only=(-DloopbackOnlyITs="$(IFS=,; echo "${inns[*]}")"); else only=(-DskipLoopbackOnlyITs=true); fi
        if [ ${#outns[@]} -gt 0 ]; then rest=(-Dit.test="$(IFS=,; echo "${outns[*]}")"); else rest=(-Dit.test=none -Dit.failIfNoSpecifiedTests=false); fi
        mvn -B -o -DskipControlPlane -DskipTestPackages verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
          "${only[@]}" "${rest[@]}" > "$out/$name.out" 2>&1 ;;
    esac
    rc=$?
    # Seen only when a test failed: a build that stopped before any test (a compile error, a plugin
    # missing offline) or tests that all skipped (no control plane) prove nothing.
    failed=$(grep -cE '^\[ERROR\] Tests run: .*(Failures: [1-9]|Errors: [1-9])' "$out/$name.out")
    { if [ $rc -ne 0 ] && [ "$failed" -gt 0 ]; then echo "SEEN FAILING: $name ($what), in $(( $(date +%s) - start )) s"
      elif [ $rc -ne 0 ]; then echo "NOT SEEN FAILING: $name ($what): the build failed before a test did (see $name.out)"
      elif grep -qE '^\[WARNING\] Tests run: ([0-9]+), Failures: 0, Errors: 0, Skipped: \1$' "$out/$name.out"; then
        echo "NOT SEEN FAILING: $name ($what): every test skipped"
      else echo "NOT SEEN FAILING: $name ($what): the tests passed"; fi
      # Each failed test once, as Class.method (a parameterized one once per invocation)
      grep -E '^\[ERROR\] [a-z0-9_.]+\.[A-Z][A-Za-z0-9]*(IT|Test)\.[^ ]+ -- Time elapsed: .*<<< (FAILURE|ERROR)!' "$out/$name.out" \
        | sed -E 's/^\[ERROR\] [a-z0-9_.]+\.([A-Z][^ ]*) -- .*<<< (FAILURE|ERROR)!.*/  \1 (\2)/' | sort -u | head -20
    } | tee "$out/$name.log"
  )
  rm -rf "$work"
done
exit
}
