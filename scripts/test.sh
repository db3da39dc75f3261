#!/usr/bin/env bash
# Runs every test: formatting, lints, the Rust suites (unit, integration, end-to-end) and the
# Python SDK client tests, inside a private D-Bus session with a throwaway unlocked keyring.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo build --workspace --locked --bins

venv=target/pyenv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt

export METACLAW_TEST_KEYCHAIN=1
export METACLAW_BIN="$PWD/target/debug/metaclaw"
export FAKE_UPSTREAM_BIN="$PWD/target/debug/fake-upstream"
dbus-run-session -- bash -euo pipefail -c '
  export XDG_DATA_HOME="$(mktemp -d)"
  echo -n "throwaway-test-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  cargo test --workspace --locked
  target/pyenv/bin/python -m pytest -q tests/python
'
