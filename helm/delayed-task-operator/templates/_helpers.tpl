{{/* Chart name, overridable. */}}
{{- define "dto.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name "<release>-<chart>", or the release name when it already contains the chart name. */}}
{{- define "dto.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "name-version" for the helm.sh/chart label. */}}
{{- define "dto.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "dto.labels" -}}
helm.sh/chart: {{ include "dto.chart" . }}
{{ include "dto.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: delayed-task-operator
{{- include "dto.commonLabels" . }}
{{- end }}

{{/* The user's commonLabels, each on its own line after the chart's labels. */}}
{{- define "dto.commonLabels" -}}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select the operator pods. */}}
{{- define "dto.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dto.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels that select the bundled Redis pods. */}}
{{- define "dto.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "dto.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/* Labels on the bundled Redis objects: the common ones with component=redis. */}}
{{- define "dto.redisLabels" -}}
helm.sh/chart: {{ include "dto.chart" . }}
{{ include "dto.redisSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: delayed-task-operator
{{- include "dto.commonLabels" . }}
{{- end }}

{{/* The operator's ServiceAccount name. */}}
{{- define "dto.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "dto.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create=false: name the existing ServiceAccount" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Operator image reference. */}}
{{- define "dto.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Name of the bundled Redis StatefulSet and Service. */}}
{{- define "dto.redisName" -}}
{{- printf "%s-redis" (include "dto.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Lease name: explicit, or the full name. */}}
{{- define "dto.leaseName" -}}
{{- default (include "dto.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{/* DELAYEDTASK_REDIS_URI: the bundled Service, or the external URI (required then). */}}
{{- define "dto.redisUri" -}}
{{- if eq .Values.redis.mode "bundled" }}
{{- printf "redis://%s.%s.svc:6379" (include "dto.redisName" .) .Release.Namespace }}
{{- else }}
{{- required "redis.external.uri is required when redis.mode=external: set it to redis://host:6379 (or rediss://, redis-sentinel://)" .Values.redis.external.uri }}
{{- end }}
{{- end }}

{{/* The operator's permissions on DelayedTasks, Jobs and Events: one list used by the ClusterRole
     (all namespaces) and by each namespaced Role (watchNamespaces). Least privilege:
     - delayedtasks: watch and patch them; delete only for ttlSecondsAfterFinished.
     - delayedtasks/finalizers: update, so Jobs may carry blockOwnerDeletion owner references
       (OwnerReferencesPermissionEnforcement).
     - jobs: create and watch; never delete: the owner reference lets garbage collection do it.
     - events: the core API only (the events.k8s.io API is not used): create, and get and patch
       to raise the count of the one Event per task and reason.
     - serviceaccounts/token: create, for the sender ServiceAccount's name only (sink.serviceAccount),
       so a sink.audience token is never one of another ServiceAccount in the namespace.
     - secrets: list and watch, for the signing Secret's name only (sink.signingSecret), read by an
       informer with the field selector metadata.name=<it> (which lets resourceNames restrict list
       and watch); never get, and no other Secret.
     - services and discovery.k8s.io endpointslices: list and watch (informers), to resolve a sink.ref
       Service's port and check that its endpoints are Pods of the task's namespace without a request
       per delivery; never get, create or change them.
     - pods: list and watch (an informer keeping name, phase and addresses only), to verify each
       endpoint by the Pod it names, which an EndpointSlice's writer cannot forge; never get them. */}}
{{- define "dto.operatorRules" -}}
- apiGroups: ["delayedtask.io"]
  resources: ["delayedtasks"]
  verbs: ["get", "list", "watch", "patch", "delete"]
- apiGroups: ["delayedtask.io"]
  resources: ["delayedtasks/status"]
  verbs: ["update"]
- apiGroups: ["delayedtask.io"]
  resources: ["delayedtasks/finalizers"]
  verbs: ["update"]
- apiGroups: ["delayedtask.io"]
  resources: ["delayedtaskqueues"]
  verbs: ["list", "watch"]
- apiGroups: ["delayedtask.io"]
  resources: ["delayedtaskqueues/status"]
  verbs: ["patch"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["create", "get", "list", "watch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "get", "patch"]
- apiGroups: [""]
  resources: ["serviceaccounts/token"]
  resourceNames: [{{ .Values.sink.serviceAccount | quote }}]
  verbs: ["create"]
- apiGroups: [""]
  resources: ["secrets"]
  resourceNames: [{{ .Values.sink.signingSecret | quote }}]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["list", "watch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
{{- end }}

{{/* DELAYEDTASK_ADMISSION_POLICY: admissionPolicy.requiredBindings, else the two bindings this chart
     ships (required even with admissionPolicy.enabled=false: the operator then fails closed until
     they exist, or until requiredBindings says none). */}}
{{- define "dto.admissionPolicyBindings" -}}
{{- if .Values.admissionPolicy.requiredBindings }}
{{- .Values.admissionPolicy.requiredBindings }}
{{- else }}
{{- printf "%s-author-rights,%s-status-writer" (include "dto.fullname" .) (include "dto.fullname" .) }}
{{- end }}
{{- end }}

{{/* The operator's view of the admission policy: list and watch (two informers), and a get of the
     DelayedTask CRD, whose uid keys its admission records. */}}
{{- define "dto.admissionPolicyRules" -}}
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["validatingadmissionpolicies", "validatingadmissionpolicybindings"]
  verbs: ["list", "watch"]
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  resourceNames: ["delayedtasks.delayedtask.io"]
  verbs: ["get"]
{{- end }}

{{/* The Secret holding the Redis password: redis.auth.existingSecret, else (bundled Redis)
     <fullname>-redis-auth, which the installer may create (so referenced with optional: true);
     empty: no password (an external Redis without existingSecret). */}}
{{- define "dto.redisPasswordSecret" -}}
{{- if .Values.redis.auth.existingSecret }}
{{- .Values.redis.auth.existingSecret }}
{{- else if eq .Values.redis.mode "bundled" }}
{{- printf "%s-redis-auth" (include "dto.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The key of the password in dto.redisPasswordSecret. */}}
{{- define "dto.redisPasswordKey" -}}
{{- if .Values.redis.auth.existingSecret }}
{{- .Values.redis.auth.existingSecretPasswordKey }}
{{- else }}
{{- print "password" }}
{{- end }}
{{- end }}

{{/* A list of strings as CEL string literals, comma-separated: 'a','b'. */}}
{{- define "dto.quotedList" -}}
{{- $quoted := list }}
{{- range . }}
{{- $quoted = append $quoted (printf "'%s'" .) }}
{{- end }}
{{- join "," $quoted }}
{{- end }}

{{/* extraEnv may add variables, never repeat one the chart sets from a value: the container would
     get both and the later would win silently (turning the admission check off through extraEnv
     kept its ClusterRole and showed two DELAYEDTASK_ADMISSION_POLICY). Fails naming the value. */}}
{{- define "dto.checkExtraEnv" -}}
{{- $owned := dict
  "DELAYEDTASK_REDIS_URI" "redis.external.uri"
  "DELAYEDTASK_REDIS_CLUSTER" "redis.external.cluster"
  "DELAYEDTASK_REDIS_SHARDS" "redis.external.shards"
  "DELAYEDTASK_REDIS_PASSWORD" "redis.auth.existingSecret"
  "DELAYEDTASK_KEY_PREFIX" "keyPrefix"
  "DELAYEDTASK_NAMESPACES" "watchNamespaces"
  "DELAYEDTASK_LEADER_ELECTION" "leaderElection.enabled"
  "DELAYEDTASK_LEASE_NAME" "leaderElection.leaseName"
  "DELAYEDTASK_LEASE_DURATION_SECONDS" "leaderElection.leaseDurationSeconds"
  "DELAYEDTASK_RESYNC_SECONDS" "resyncSeconds"
  "DELAYEDTASK_CLAIM_LEASE_SECONDS" "claimLeaseSeconds"
  "DELAYEDTASK_FINISHED_TTL_SECONDS" "finishedTtlSeconds"
  "DELAYEDTASK_DEFAULT_STARTING_DEADLINE_SECONDS" "defaultStartingDeadlineSeconds"
  "DELAYEDTASK_HTTP_PORT" "httpPort"
  "DELAYEDTASK_SINK_ALLOWED_URIS" "sink.allowedUris"
  "DELAYEDTASK_SINK_CLUSTER_DOMAIN" "sink.clusterDomain"
  "DELAYEDTASK_SINK_SERVICE_ACCOUNT" "sink.serviceAccount"
  "DELAYEDTASK_SINK_SIGNING_SECRET" "sink.signingSecret"
  "DELAYEDTASK_SINK_MAX_IN_FLIGHT" "sink.maxInFlight"
  "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_HOST" "sink.maxInFlightPerHost"
  "DELAYEDTASK_SINK_MAX_IN_FLIGHT_PER_NAMESPACE" "sink.maxInFlightPerNamespace"
  "DELAYEDTASK_ADMISSION_POLICY" "admissionPolicy.requiredBindings (none turns the check off and drops its ClusterRole)"
  "DELAYEDTASK_LOG_LEVEL" "logLevel"
  "DELAYEDTASK_LOG_FORMAT" "logFormat"
  "DELAYEDTASK_IDENTITY" "nothing: each pod's name"
  "POD_NAMESPACE" "nothing: the pod's namespace"
  "JDK_JAVA_OPTIONS" "jvmOptions" }}
{{- range .Values.extraEnv }}
{{- if hasKey $owned .name }}
{{- fail (printf "extraEnv names %s, which the chart sets itself: set %s instead" .name (get $owned .name)) }}
{{- end }}
{{- end }}
{{- end }}
