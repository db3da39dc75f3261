#!/usr/bin/env bash
# Runs a command while every core is kept busy, the way a CI machine shared with another job
# is: `stress-ng --cpu N` (N = STRESS_CPUS, default: the number of cores) runs in the
# background for the duration of the command and is stopped when it ends, fails or is
# interrupted. With -n RUNS the command runs RUNS times in a row and stops at the first failure.
#
#   bash scripts/stress.sh -n 10 npm --prefix ui test -- --run
#   bash scripts/test.sh --stress          # the whole suite, through this script
#
# Installs Debian's stress-ng with apt-get when it is missing.
set -euo pipefail

runs=1
if [ "${1:-}" = "-n" ]; then
  runs=${2:?-n needs a number of runs}
  shift 2
fi
[ "$#" -gt 0 ] || { echo "usage: $0 [-n RUNS] COMMAND [ARGS...]" >&2; exit 2; }

if ! command -v stress-ng >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y stress-ng >/dev/null || { $sudo apt-get update >/dev/null && $sudo apt-get install -y stress-ng >/dev/null; }
fi

cpus=${STRESS_CPUS:-$(nproc)}
# The timeout is only a backstop should this script be killed outright (SIGKILL skips the trap).
stress-ng --cpu "$cpus" --timeout "${STRESS_TIMEOUT:-3h}" --quiet &
stress_pid=$!
stop_stress() {
  kill "$stress_pid" 2>/dev/null || true
  wait "$stress_pid" 2>/dev/null || true
}
trap stop_stress EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "stress.sh: stress-ng --cpu $cpus running (pid $stress_pid)" >&2

for ((i = 1; i <= runs; i++)); do
  [ "$runs" -eq 1 ] || echo "stress.sh: run $i of $runs: $*" >&2
  if ! "$@"; then
    echo "stress.sh: failed on run $i of $runs under stress-ng --cpu $cpus" >&2
    exit 1
  fi
done
[ "$runs" -eq 1 ] || echo "stress.sh: $runs of $runs runs passed under stress-ng --cpu $cpus" >&2
