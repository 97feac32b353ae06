#!/usr/bin/env bash
# Breaks one behaviour on purpose and runs the tests that name it, to see them fail (issue 18: a
# test that cannot fail for what it names proves nothing). Each break is one edit to a fresh clone
# of this repository's HEAD (uncommitted changes are not included) in a temporary folder; this
# working tree is never touched. An edit that no longer applies (the code moved) stops with
# "EDIT DID NOT APPLY" rather than passing quietly. docs/development.md#seen-failing has the results.
#
#   tools/seen-failing.sh             the list of breaks
#   tools/seen-failing.sh NAME...     run those; NAME.log (summary) and NAME.out (Maven's output)
#                                     go to target/seen-failing/. A break is seen when the build fails
#                                     in the tests it names.
#
# Needs what `mvn verify` needs, already in place (control plane built, Maven repository filled):
# it runs Maven offline with -DskipControlPlane -DskipTestPackages.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/target/seen-failing"
D=src/main/java/io/delayedtask/operator
T=src/test/java/io/delayedtask/operator

# One break a line, tab-separated: name, kind (unit, it, netns: LinkLocalSinkIT's own JVM), the tests,
# what it breaks, the edit (bash, run in the clone)
breaks() {
cat <<'LIST'
suspend	it	LifecycleIT#suspendedTaskWaitsAndFiresAtOnceWhenResumed+unsuspendedPastItsStartingDeadlineItIsMissed	spec.suspend ignored	sed -i 's/if (facts.task().getSpec().isSuspended()) {/if (false \&\& facts.task().getSpec().isSuspended()) {/' $D/reconcile/TaskDecider.java
ttl	it	LifecycleIT#finishedTaskIsDeletedAfterItsTtl+aJobDeletedWhileRunningFailsTheTaskAndItsTtlStarts	every TTL counted twice	sed -i 's/finished.plusSeconds(ttl.get()))/finished.plusSeconds(ttl.get() * 2))/' $D/reconcile/TaskDecider.java
move	it	LifecycleIT#changingTheDueTimeMovesTheEntry	a Scheduled task's new due time not written to Redis (left to the resync)	perl -0pi -e 's/== Phase.Scheduled\n\s+&& Times.format\(due\).equals\(draft.current.getDueTime\(\)\);/== Phase.Scheduled;/' $D/reconcile/TaskDecider.java
events	it	LifecycleIT#aRunAtChangedAfterFiringFiresAgain,ApiServerWithoutSchemaIT,LeadershipIT	a second JobCreated Event per firing	perl -0pi -e 's/(      events.normal\(task, event.reason\(\), event.message\(\)\);\n)/$1      if ("JobCreated".equals(event.reason())) { events.normal(task, event.reason(), "again " + event.message()); }\n/' $D/reconcile/DelayedTaskReconciler.java
get	it	RequestBudgetIT	a GET of the task in every reconcile	perl -0pi -e 's/(    DelayedTask task = cached;\n)/$1    context.getClient().resources(DelayedTask.class).inNamespace(cached.getMetadata().getNamespace()).withName(cached.getMetadata().getName()).get();\n/' $D/reconcile/DelayedTaskReconciler.java
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
guard	netns	LinkLocalSinkIT	the sink's address guard allows everything	perl -0pi -e 's/(    String shown = text\(address\);\n)/    if (true) {\n      return Optional.empty();\n    }\n$1/' $D/sink/AddressGuard.java
audience	it	AdmissionPolicyIT#withoutTokenRightsATaskWithAnAudienceIsRefusedWithAMessageSayingWhatToDo+whoeverMayCreateTheSendersTokensMayWriteATaskWithAnAudienceAndNoOneElseMayPatchOneIn	the audience rule removed from the admission policy (issue 23)	sed -i 's/    - expression: "!has(object.spec.sink) || !has(object.spec.sink.audience) || authorizer/    - expression: "true || authorizer/' helm/delayed-task-operator/templates/admission-policy.yaml
warn	it	AdmissionPolicyIT	the policies' bindings only warn (validationActions: [Warn]) (issue 23)	sed -i 's/  validationActions: \[Deny\]/  validationActions: [Warn]/' helm/delayed-task-operator/templates/admission-policy.yaml
statuswriter	it	AdmissionPolicyIT#statusWritesByAnyoneButTheOperatorAreRefusedWithAMessage	anyone may write a task's status (issue 23)	sed -i 's/    - expression: "request.userInfo.username == variables.operator || request.userInfo.username in variables.statusWriters || /    - expression: "true || /' helm/delayed-task-operator/templates/admission-policy.yaml
failopen	it	AdmissionPolicyMissingIT	the operator fails open: the admission policy counts as present when missing (issue 23)	sed -i 's/^  public Optional<String> missing() {$/  public Optional<String> missing() {\n    if (true) {\n      return Optional.empty();\n    }/' $D/reconcile/AdmissionPolicies.java
failopenunit	unit	TaskDeciderTest	the decision ignores a missing admission policy (issue 23)	sed -i 's/    if (draft.facts.admissionPolicyMissing().isPresent()) {/    if (false) {/' $D/reconcile/TaskDecider.java && sed -i 's/      if (draft.facts.admissionPolicyMissing().isPresent() \&\& /      if (false \&\& /' $D/reconcile/DeliveryDecisions.java
httpidle	unit	HttpEndpointsTest	no read timeout on the metrics and probe server (issue 23)	sed -i '/new ReadTimeoutHandler(readTimeout.toMillis(), TimeUnit.MILLISECONDS)/d' $D/http/HttpEndpoints.java
failopenwiring	it	AdmissionPolicyMissingIT	the reconciler never tells the decision the policy is missing (issue 23)	sed -i 's/        deliveries.inFlight(id), Optional.empty(), admissionPolicies.missing());/        deliveries.inFlight(id), Optional.empty(), Optional.empty());/' $D/reconcile/DelayedTaskReconciler.java
LIST
}

if [ $# -eq 0 ]; then
  breaks | awk -F'\t' '{printf "%-10s %-5s %s\n           breaks: %s\n", $1, $2, $3, $4}'
  exit 0
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
      it) mvn -B -o -DskipControlPlane -DskipTestPackages verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
            -DskipLoopbackOnlyITs=true -Dit.test="$tests" > "$out/$name.out" 2>&1 ;;
      netns) mvn -B -o -DskipControlPlane -DskipTestPackages verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
            -Dit.test=none -Dit.failIfNoSpecifiedTests=false > "$out/$name.out" 2>&1 ;;
    esac
    rc=$?
    { if [ $rc -ne 0 ]; then echo "SEEN FAILING: $name ($what), in $(( $(date +%s) - start )) s"
      else echo "NOT SEEN FAILING: $name ($what): the tests passed"; fi
      grep -E '^\[ERROR\]   [A-Za-z]+(IT|Test)\.' "$out/$name.out" | cut -c1-300 | head -10
    } | tee "$out/$name.log"
  )
  rm -rf "$work"
done
