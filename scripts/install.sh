#!/usr/bin/env bash
# Installs what is missing, builds MetaClaw, puts `metaclaw` on PATH and starts it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# The web UI (served at /ui/) is embedded in the binary; without npm the binary carries a page
# saying how to build it instead.
if command -v npm >/dev/null; then
  npm --prefix ui ci --no-audit --no-fund
  npm --prefix ui run build
else
  echo "npm not found: building without the web UI (install Node.js 20+ and rerun to get it)."
fi
cargo build --release --locked -p metaclaw
bin_dir="${METACLAW_BIN_DIR:-$HOME/.local/bin}"
mkdir -p "$bin_dir"
install -m 0755 target/release/metaclaw "$bin_dir/metaclaw"
echo "Installed $bin_dir/metaclaw"
case ":$PATH:" in *":$bin_dir:"*) ;; *) echo "Add $bin_dir to your PATH to run 'metaclaw' directly.";; esac
if "$bin_dir/metaclaw" status >/dev/null 2>&1; then
  "$bin_dir/metaclaw" stop
fi
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  # The desktop app: the engine runs inside it, and its first run opens the setup window.
  nohup "$bin_dir/metaclaw" >/dev/null 2>&1 &
  echo "MetaClaw is starting in your tray; on first run its setup window opens."
else
  "$bin_dir/metaclaw" start --daemon
  "$bin_dir/metaclaw" status || true
  echo
  echo "Next: connect your agent and LLM provider (asks a few questions; keys go to the OS keychain):"
  echo "  metaclaw setup"
fi
