#!/usr/bin/env bash
# Installs the real agents the end-to-end tests drive, from the npm registry, into
# target/agents (kept between runs): Node.js 24 (OpenClaw needs >= 24.16; npm ships it as the
# package node@24), OpenClaw and Claude Code, at pinned versions; and from PyPI CoPaw and
# Hermes Agent, pinned, each in its own virtualenv under target/agents/py (their
# dependencies conflict), kept between runs and reinstalled only when a pin changes.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/agents
openclaw=2026.9.6
claude=2.1.332
mkdir -p "$dir"
if [ ! -x "$dir/node_modules/.bin/openclaw" ] || [ ! -x "$dir/node_modules/.bin/claude" ] \
  || ! grep -q "\"version\": \"$openclaw\"" "$dir/node_modules/openclaw/package.json" 2>/dev/null; then
  [ -f "$dir/package.json" ] || echo '{"name":"metaclaw-test-agents","private":true}' > "$dir/package.json"
  npm --prefix "$dir" install --no-audit --no-fund --loglevel=error node@24
  PATH="$PWD/$dir/node_modules/node/bin:$PATH" npm --prefix "$dir" install --no-audit --no-fund \
    --loglevel=error "openclaw@$openclaw" "@anthropic-ai/claude-code@$claude"
fi

# CoPaw 1.0.2 needs mcp < 2 and openai 2.x to run; its own pins allow newer ones.
copaw=1.0.2
hermes=0.19.0
py="${PYTHON_AGENTS:-python3.11}"
command -v "$py" >/dev/null || py=python3
venv() { # name, version, pip requirements...
  local name=$1 version=$2 env="$dir/py/$1"
  shift 2
  if ! "$env/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$name') != '$version')" 2>/dev/null; then
    rm -rf "$env"
    "$py" -m venv "$env"
    "$env/bin/pip" install -q --disable-pip-version-check "$@" >&2
  fi
}
venv copaw "$copaw" "copaw==$copaw" "mcp<2" "openai>=2,<3"
venv hermes-agent "$hermes" "hermes-agent==$hermes"
echo "$PWD/$dir"
