#!/usr/bin/env bash
# Measures the desktop app: time from launch to a healthy engine, memory idle in the tray
# (started --hidden, no window) and with the dashboard window open. Memory is the whole
# process tree (WebKit's web and network processes included): PSS from
# /proc/<pid>/smaps_rollup, RSS where that is missing. Runs under its own Xvfb and private
# D-Bus, in a throwaway home.
#
#   scripts/measure-desktop.sh [path/to/metaclaw]   (default: target/release/metaclaw)
#   SETTLE=10 scripts/measure-desktop.sh             (seconds to let each state settle)
#   WAKE_SECS=60 scripts/measure-desktop.sh          (how long wake-ups at rest are counted)
#   WAKE_SETTLE=60 scripts/measure-desktop.sh        (seconds at rest before counting: start-up
#                                                     work, the first retries and the allocator's
#                                                     page purging end first)
#
# Wake-ups at rest: context switches of every thread of the process (threads started during
# the count included) over WAKE_SECS, in the tray with no window and as `start --daemon`,
# counted by `perf stat -e context-switches` where perf is installed, else summed from
# /proc/<pid>/task/*/status (threads that come and go within the count are missed there).
set -euo pipefail

BIN=${1:-target/release/metaclaw}
SETTLE=${SETTLE:-8}
WAKE_SECS=${WAKE_SECS:-60}
WAKE_SETTLE=${WAKE_SETTLE:-60}
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release -p metaclaw)" >&2; exit 2; }
for tool in Xvfb dbus-daemon xdotool curl; do
  command -v "$tool" >/dev/null || { echo "$tool is required (scripts/deps.sh)" >&2; exit 2; }
done

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# A free X display.
N=$((400 + $$ % 400))
while [ -e "/tmp/.X11-unix/X$N" ] || [ -e "/tmp/.X$N-lock" ]; do N=$((N + 1)); done
Xvfb ":$N" -nolisten tcp -screen 0 1280x800x24 >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do [ -e "/tmp/.X11-unix/X$N" ] && break; sleep 0.05; done
export DISPLAY=":$N" GDK_BACKEND=x11 NO_AT_BRIDGE=1
unset WAYLAND_DISPLAY XDG_CONFIG_HOME

dbus-daemon --session --nofork --nopidfile --print-address=1 >"$WORK/bus" 2>/dev/null &
PIDS+=($!)
for _ in $(seq 200); do [ -s "$WORK/bus" ] && break; sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$WORK/bus")

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$WORK/home" "$WORK/user"
# A provider is configured (unreachable: nothing is sent), so the window opens the dashboard.
cat >"$WORK/home/config.yaml" <<EOF
llm:
  provider: custom
  api: openai
  api_base: http://127.0.0.1:9/v1
  model_id: measure
proxy:
  port: $PORT
# No embedding model download: a machine with the model installed (or without the network)
# does not retry one at 1, 2, 4… minutes, which would land in the wake-up count.
skills:
  embedding_download: false
EOF
export METACLAW_HOME="$WORK/home" HOME="$WORK/user" METACLAW_SECRET_BACKEND=file
export METACLAW_PROXY_API_KEY=measure-proxy-key

# Every descendant of $1, and $1.
tree() {
  local all=("$1") i=0
  while [ $i -lt ${#all[@]} ]; do
    for c in $(cat /proc/"${all[$i]}"/task/*/children 2>/dev/null); do all+=("$c"); done
    i=$((i + 1))
  done
  echo "${all[@]}"
}

# "<total kB> <anonymous kB> <process count> <names>" for the tree of $1. Anonymous memory
# is the part no other program shares and the kernel cannot drop (the rest maps files:
# the binary and the GTK/WebKit libraries).
memory() {
  local total=0 anon=0 n=0 names=""
  for p in $(tree "$1"); do
    local kb a
    kb=$(awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || true)
    a=$(awk '/^Pss_Anon:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null || true)
    [ -n "$kb" ] || kb=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)
    [ -n "$a" ] || a=$(awk '/^RssAnon:/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)
    total=$((total + kb)); anon=$((anon + a)); n=$((n + 1))
    names="$names $(cat /proc/"$p"/comm 2>/dev/null)=$((kb / 1024))MB"
  done
  echo "$total $anon $n$names"
}

# Context switches of all threads of $1 now (the /proc fallback).
switches() {
  local n=0
  for f in /proc/"$1"/task/*/status; do
    n=$((n + $(awk '/ctxt_switches/ {s += $2} END {print s + 0}' "$f" 2>/dev/null || echo 0)))
  done
  echo "$n"
}

# "<wake-ups per second> <how counted>" of process $1 over WAKE_SECS.
wakeups() {
  local n how
  if command -v perf >/dev/null && perf stat -e context-switches -p "$1" -- true >/dev/null 2>&1; then
    n=$(perf stat -x, -e context-switches -p "$1" -- sleep "$WAKE_SECS" 2>&1 | awk -F, '/context-switches/ {print $1}')
    how="perf"
  else
    local a b
    a=$(switches "$1"); sleep "$WAKE_SECS"; b=$(switches "$1")
    n=$((b - a)); how="/proc"
  fi
  awk -v n="$n" -v s="$WAKE_SECS" -v how="$how" 'BEGIN {printf "%.2f/s (%d in %d s, %s)", n / s, n, s, how}'
}

START=$(date +%s%N)
"$BIN" --hidden >"$WORK/app.log" 2>&1 &
APP=$!
PIDS+=($APP)
until curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; do
  kill -0 "$APP" 2>/dev/null || { echo "the app exited:"; cat "$WORK/app.log"; exit 1; }
  sleep 0.01
done
HEALTHY=$(date +%s%N)
echo "startup to healthy engine: $(( (HEALTHY - START) / 1000000 )) ms"

sleep "$SETTLE"
read -r kb anon n names <<<"$(memory "$APP")"
echo "idle in the tray (no window): $((kb / 1024)) MB PSS, $((anon / 1024)) MB anonymous, in $n processes ($names )"
sleep "$WAKE_SETTLE"
echo "wake-ups at rest in the tray (no window): $(wakeups "$APP")"

# A second launch shows the running app's window (the dashboard).
"$BIN" >"$WORK/second.log" 2>&1 || { echo "second launch failed:"; cat "$WORK/second.log"; exit 1; }
for _ in $(seq 600); do
  xdotool search --onlyvisible --name '^MetaClaw$' >/dev/null 2>&1 && break
  sleep 0.05
done
sleep "$SETTLE"
read -r kb anon n names <<<"$(memory "$APP")"
echo "with the dashboard open: $((kb / 1024)) MB PSS, $((anon / 1024)) MB anonymous, in $n processes ($names )"

kill -TERM "$APP"
wait "$APP" && echo "stopped cleanly" || echo "exit status $?"

# The engine alone, as `metaclaw start --daemon` runs it.
"$BIN" start --daemon >"$WORK/daemon.log" 2>&1 || { echo "start --daemon failed:"; cat "$WORK/daemon.log"; exit 1; }
DAEMON=$(cat "$WORK/home/run/metaclaw.pid" 2>/dev/null || pgrep -n -f "$BIN.*(start|engine)" || true)
[ -n "$DAEMON" ] || { echo "no daemon pid"; exit 1; }
PIDS+=("$DAEMON")
sleep "$WAKE_SETTLE"
echo "wake-ups at rest as a daemon: $(wakeups "$DAEMON")"
"$BIN" stop >/dev/null 2>&1 || true
