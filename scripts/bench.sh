#!/usr/bin/env bash
# The hot-path benchmark against its peer, in one run per load: the fake upstream directly,
# through MetaClaw, and through LiteLLM's proxy (one worker, the same fake), alternating
# rounds so drift hits all three alike. LiteLLM comes from PyPI into target/litellm-venv,
# pinned so runs compare.
#
#   scripts/bench.sh                 one client, then 16 clients
#   REQUESTS=2000 scripts/bench.sh   fewer requests per phase (LiteLLM serves ~50-100/s)
set -euo pipefail
cd "$(dirname "$0")/.."

LITELLM_VERSION=1.108.7
REQUESTS=${REQUESTS:-4000}
VENV=target/litellm-venv

if [ ! -x "$VENV/bin/litellm" ] || ! "$VENV/bin/pip" show litellm 2>/dev/null | grep -qx "Version: $LITELLM_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "litellm[proxy]==$LITELLM_VERSION"
fi
cargo build --release -p metaclaw -p metaclaw-e2e

for clients in 1 16; do
  target/release/bench --concurrency "$clients" --requests "$REQUESTS" \
    --litellm "$VENV/bin/litellm" --time-limit 1800 "$@"
done
