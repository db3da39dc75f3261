#!/usr/bin/env bash
# Installs the real agents the end-to-end tests drive, from the npm registry, into
# target/agents (kept between runs): Node.js 24 (OpenClaw needs >= 24.16; npm ships it as the
# package node@24), OpenClaw and Claude Code, at pinned versions.
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
echo "$PWD/$dir"
