#!/usr/bin/env bash
# Installs the Debian packages some integration tests need beyond JDK and Maven, and stops any
# service they start:
#   prometheus:   promtool (PrometheusRulePromtoolIT: check and unit-test the chart's alerts) and the
#                 prometheus server (MonitoringIT: evaluate every rule and dashboard expression).
#   redis-server: Debian's Redis 7, built with TLS (RedisScheduleTlsIT: the schedule over rediss://;
#                 the Redis 6.2 that embedded-redis ships has no TLS).
#
# Who runs it: .ci/run, before `mvn -B verify`; and `mvn verify` itself at pre-integration-test
# (profile test-packages, off with -DskipTests or -DskipTestPackages). `mvn package` never runs it.
# Idempotent and quick: when every command is already there it does nothing (no apt-get update).
# Where it cannot install (no apt-get, as on macOS; not root and no password-less sudo) it says what
# to install and exits 0: tests that need a missing tool skip with one loud line, and fail when
# CI=true (testing/RequiredTool).
#
# Portable to bash 3.2 (macOS): no associative arrays.
#
# Usage: tools/install-test-packages.sh
set -euo pipefail

# "command the tests run:the Debian package that ships it"
NEEDED="promtool:prometheus prometheus:prometheus redis-server:redis-server"
# the services those packages would start: the tests start their own processes on free ports
SERVICES="prometheus redis-server"

packages=""
missing_commands=""
for pair in $NEEDED; do
  command="${pair%%:*}"
  package="${pair#*:}"
  if ! command -v "$command" >/dev/null 2>&1; then
    missing_commands="$missing_commands $command"
    case " $packages " in
      *" $package "*) ;;
      *) packages="$packages $package" ;;
    esac
  fi
done
if [ -z "$packages" ]; then
  exit 0
fi
packages="${packages# }"

cannot_install() {
  echo "install-test-packages: NOT INSTALLED:${missing_commands} ($1)." >&2
  echo "install-test-packages: install them yourself (Debian/Ubuntu: apt-get install ${packages}; macOS: brew install prometheus redis)," >&2
  echo "install-test-packages: or the tests that run them skip (and fail with CI=true)." >&2
  exit 0
}

if ! command -v apt-get >/dev/null 2>&1; then
  cannot_install "no apt-get on this machine"
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    cannot_install "not root, and no password-less sudo"
  fi
fi
echo "install-test-packages: installing the Debian packages ${packages} (for${missing_commands}) with apt-get"
# policy-rc.d exit 101: the packages' services are not started (the tests start their own Prometheus).
policy=/usr/sbin/policy-rc.d
created_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod +x "$policy"
  created_policy=true
fi
trap '[ "$created_policy" = true ] && $SUDO rm -f "$policy"' EXIT
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $packages >/dev/null
# Where policy-rc.d was already there but allows starts (or systemd ignores it), stop what started.
for service in $SERVICES; do
  if [ -x "/etc/init.d/$service" ] && $SUDO service "$service" status >/dev/null 2>&1; then
    $SUDO service "$service" stop >/dev/null 2>&1 || true
  fi
done
for pair in $NEEDED; do
  command="${pair%%:*}"
  command -v "$command" >/dev/null || { echo "install-test-packages: $command still missing" >&2; exit 1; }
done
