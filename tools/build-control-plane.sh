#!/usr/bin/env bash
# Builds real Kubernetes control planes (kube-apiserver, etcd, kubectl, kube-controller-manager,
# kube-scheduler, kwok) from upstream Go modules and puts each where fabric8 kube-api-test looks:
#   ${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s/<version>-linux-amd64/
# Two releases: the newest, on which every test runs, and the oldest the docs claim (1.30), on
# which OldestKubernetesIT runs the CRDs, the admission policy, the RBAC and one task of each kind.
#
# Why from modules: these machines reach the Go module proxy but not the internet, so
# kube-api-test cannot download its envtest binaries. On a machine with internet and no Go, skip
# this script: kube-api-test downloads the binaries itself on first use (the newest only).
#
# Idempotent: when every binary is there and reports the right version, it exits in well under a
# second. The Go module and build caches stay where Go keeps them, so a rebuild is warm.
#
# Usage: tools/build-control-plane.sh [--force | --if-go]
#   --force  rebuild even when the binaries are there
#   --if-go  (what `mvn verify` runs) without Go on PATH, say so and succeed: the real-API-server
#            tests then skip loudly on a developer machine, and fail in CI
# DELAYEDTASK_KUBE_VERSION (with DELAYEDTASK_ETCD_VERSION, DELAYEDTASK_KWOK_VERSION) builds that
# one release instead of the two below; DELAYEDTASK_KWOK_VERSION=none leaves kwok out.
set -euo pipefail

# The newest release whose whole dependency graph the module proxy serves (see docs/control-plane.md),
# with the etcd envtest pairs with Kubernetes 1.37 (v3.7.3, its newest patch release) and kwok.
NEWEST="1.37.2 3.7.3 0.8.0"
# The oldest release the docs claim (1.30: ValidatingAdmissionPolicy v1), its newest patch release,
# with the etcd minor it was released with (3.5; v3.5.36, its newest patch release). No kwok: what
# runs there needs no pod to run (OldestKubernetesIT writes the Job's outcome itself).
OLDEST="1.30.14 3.5.36 none"
if [ -n "${DELAYEDTASK_KUBE_VERSION:-}" ]; then
  RELEASES=("$DELAYEDTASK_KUBE_VERSION ${DELAYEDTASK_ETCD_VERSION:-3.7.3} ${DELAYEDTASK_KWOK_VERSION:-0.8.0}")
else
  RELEASES=("$NEWEST" "$OLDEST")
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

base=${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}
work=${XDG_CACHE_HOME:-$HOME/.cache}/delayed-task-operator/control-plane
force=false
if_go=false
case "${1:-}" in
  --force) force=true ;;
  --if-go) if_go=true ;;
  "") ;;
  *) echo "usage: $0 [--force | --if-go]" >&2; exit 2 ;;
esac

log() { printf '[control-plane] %s\n' "$*" >&2; }

have() { # have BINARY VERSION-SUBSTRING: the binary is there and says it is that version
  [ -x "$out/$1" ] && "$out/$1" "${@:3}" 2>/dev/null | grep -q -- "$2"
}

up_to_date() {
  have kube-apiserver "v$KUBE_VERSION" --version \
    && have kube-controller-manager "v$KUBE_VERSION" --version \
    && have kube-scheduler "v$KUBE_VERSION" --version \
    && have kubectl "v$KUBE_VERSION" version --client \
    && have etcd "$ETCD_VERSION" --version \
    && { [ "$KWOK_VERSION" = none ] || { have kwok "$KWOK_VERSION" --version \
      && [ -f "$out/kwok-stages/pod-delete.yaml" ]; }; }
}

# tools/kstatus's modules (KstatusIT's `go build` runs with GOPROXY=off, so it needs nothing but
# what this fetched), then a build exactly as KstatusIT's, offline: it fails here if a module is
# missing, and leaves the compiled packages in Go's build cache, so the test only links (cold, the
# compile of cli-utils and apimachinery takes minutes on a busy 2-core machine). Quick when cached.
kstatus_modules() {
  command -v go >/dev/null || return 0
  log "Go modules of tools/kstatus, and its build"
  (cd "$(dirname "$0")/kstatus" && GOFLAGS=-mod=readonly go mod download \
    && GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" GOPROXY=off go build -o /dev/null .)
}

# The same for the kubectl dt plugin (kubectl-dt/, built by KubectlDtIT with GOPROXY=off).
kubectl_dt_modules() {
  command -v go >/dev/null || return 0
  log "Go modules of kubectl-dt, and its build"
  (cd "$(dirname "$0")/../kubectl-dt" && GOFLAGS=-mod=readonly go mod download \
    && GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" GOPROXY=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /dev/null .)
}

# release KUBE ETCD KWOK: sets the versions and the directory of one release.
release() {
  KUBE_VERSION=$1 ETCD_VERSION=$2 KWOK_VERSION=$3
  out="$base/k8s/${KUBE_VERSION}-linux-amd64"
}

missing=()
for r in "${RELEASES[@]}"; do
  release $r
  if ! $force && up_to_date; then
    log "Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION already in $out"
  else
    missing+=("$r")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  kstatus_modules
  kubectl_dt_modules
  exit 0
fi

if ! command -v go >/dev/null; then
  log "go is not on PATH, so the real Kubernetes binaries cannot be built here: install Go 1.26,"
  log "or on a machine with internet run the tests with DELAYEDTASK_KUBE_DOWNLOAD=true (kube-api-test downloads them)"
  $if_go && exit 0
  exit 1
fi
mkdir -p "$work"
# One build at a time (CI's explicit run, Maven's, a developer's): a second waits, then finds the
# binaries built.
exec 9>"$work/.lock"
if ! flock -n 9; then
  if $if_go; then
    # Maven's call while a build runs elsewhere (a developer's, or CI's own first step): the tests
    # use what is there, and skip loudly what is not.
    log "another build of the control plane is running; not waiting for it"
    exit 0
  fi
  log "another build of the control plane is running; waiting for it"
  flock 9
fi

# build_release: builds the release set by `release` into $out.
build_release() {
started=$(date +%s)
log "building the real control plane into $out (cold: about 7 minutes on 2 idle cores, up to 40 shared; cached afterwards)"
mkdir -p "$out"

# --- Kubernetes: a module of our own that requires k8s.io/kubernetes and pins its staging modules.
# k8s.io/kubernetes requires k8s.io/<staging> v0.0.0 and replaces them with ./staging paths, which
# a dependent module ignores; the same replaces, pointed at the published v0.<minor>.<patch>
# modules, make the graph resolvable. The list comes from upstream's own go.mod, so it follows new
# staging modules from release to release without edits here.
kube="$work/kubernetes-$KUBE_VERSION"
mkdir -p "$kube"
staging="v0.${KUBE_VERSION#*.}"
if [ ! -f "$kube/go.sum" ]; then
  log "resolving k8s.io/kubernetes v$KUBE_VERSION (staging modules at $staging)"
  upstream_gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  godebug=$(grep -E '^godebug ' "$upstream_gomod" || true)
  {
    echo "module delayedtask.io/control-plane/kubernetes"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
    [ -n "$godebug" ] && { echo; echo "$godebug"; }
    echo
    echo "require k8s.io/kubernetes v$KUBE_VERSION"
    echo
    echo "replace ("
    grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$upstream_gomod" \
      | awk -v v="$staging" '{ printf "\t%s v0.0.0 => %s %s\n", $1, $1, v }'
    echo ")"
  } >"$kube/go.mod"
  cat >"$kube/tools.go" <<'EOF'
//go:build tools

// Package tools pins the upstream main packages this module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
  (cd "$kube" && go mod tidy)
fi

# Upstream's release flags (hack/lib/golang.sh), with the version stamped so /version is honest.
minor=${KUBE_VERSION#*.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
# What kube-api-test needs first (kube-apiserver, kubectl; etcd below), then the optional controllers.
for cmd in kube-apiserver kubectl kube-controller-manager kube-scheduler; do
  log "building $cmd v$KUBE_VERSION"
  (cd "$kube" && go build -trimpath -tags selinux,notest -ldflags "$ldflags" -o "$out/$cmd" "k8s.io/kubernetes/cmd/$cmd")
done

# --- etcd: a module of its own, so its gRPC pins do not move Kubernetes' and the other way round.
etcd="$work/etcd-$ETCD_VERSION"
mkdir -p "$etcd"
if [ ! -f "$etcd/go.sum" ]; then
  log "resolving go.etcd.io/etcd/server/v3 v$ETCD_VERSION"
  cat >"$etcd/go.mod" <<EOF
module delayedtask.io/control-plane/etcd

go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION
EOF
  # What etcd's own server/main.go does.
  cat >"$etcd/main.go" <<'EOF'
// Command etcd is upstream etcd's server entry point, built from its published module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF
  (cd "$etcd" && go mod tidy)
fi
log "building etcd v$ETCD_VERSION"
(cd "$etcd" && go build -trimpath -ldflags "-s -w" -o "$out/etcd" .)

# --- kwok: fake nodes and pods, so Jobs run to an outcome without a kubelet. It has no replace
# directives, so a plain `go install` of the tagged module works.
if [ "$KWOK_VERSION" != none ]; then
  log "building kwok v$KWOK_VERSION"
  GOBIN="$out" go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v$KWOK_VERSION" \
    "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  # kwok's stage files (what fake pods do) ship in its module; keep the ones we use beside it.
  kwok_dir=$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  mkdir -p "$out/kwok-stages"
  for stage in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    cp -f "$kwok_dir/kustomize/stage/$stage" "$out/kwok-stages/"
  done
  chmod -R u+w "$out/kwok-stages"
fi
log "done in $(( $(date +%s) - started )) s: $(ls "$out" | tr '\n' ' ')"
}

for r in "${missing[@]}"; do
  release $r
  if ! $force && up_to_date; then
    log "built meanwhile: Kubernetes $KUBE_VERSION in $out"
    continue
  fi
  build_release
done

kstatus_modules
kubectl_dt_modules
