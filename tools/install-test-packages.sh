#!/usr/bin/env bash
# Installs the Debian packages the tests need beyond JDK and Maven, and stops any service they start.
#   prometheus: promtool (PrometheusRuleTest: check and unit-test the chart's alerts) and the
#               prometheus server (MonitoringIT: evaluate every rule and dashboard expression).
#   redis-server: Debian's Redis 7, built with TLS (RedisScheduleTlsIT: the schedule over rediss://;
#               the Redis 6.2 that embedded-redis ships has no TLS).
#
# Idempotent and quick: when every command is already there it does nothing (no apt-get update).
# Tests that need a missing tool skip with one loud line, and fail when CI=true (testing/RequiredTool).
#
# Usage: tools/install-test-packages.sh   (as root, or with sudo available)
set -euo pipefail

# command the tests run -> the Debian package that ships it
declare -A PACKAGE_OF=(
  [promtool]=prometheus
  [prometheus]=prometheus
  [redis-server]=redis-server
)
# the services those packages would start: the tests start their own processes on free ports
SERVICES=(prometheus redis-server)

missing=()
for command in "${!PACKAGE_OF[@]}"; do
  if ! command -v "$command" >/dev/null 2>&1; then
    missing+=("${PACKAGE_OF[$command]}")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-test-packages: installing ${packages}"
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
for service in "${SERVICES[@]}"; do
  if [ -x "/etc/init.d/$service" ] && $SUDO service "$service" status >/dev/null 2>&1; then
    $SUDO service "$service" stop >/dev/null 2>&1 || true
  fi
done
for command in "${!PACKAGE_OF[@]}"; do
  command -v "$command" >/dev/null || { echo "install-test-packages: $command still missing" >&2; exit 1; }
done
