#!/usr/bin/env bash
# Builds MetaClaw's Debian package with Tauri's bundler: the web UI (embedded in the binary),
# the release binary, then target/release/bundle/deb/metaclaw_<version>_<arch>.deb with the
# binary in /usr/bin, the desktop entry, the icons from icons/app/ at every size, and the
# libraries it needs declared, so `apt install ./metaclaw_*.deb` pulls them.
#
#   scripts/package.sh           the release package (what users install)
#   scripts/package.sh --debug   packages the debug build already made, for CI's package test
#
# Prints the package's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
if [ "${1:-}" = "--debug" ]; then
  profile=debug
fi
# Tauri's CLI from npm (its binary is inside the package; nothing else is downloaded).
npm --prefix src-tauri ci --no-audit --no-fund --loglevel=error
if [ "$profile" = release ]; then
  bash scripts/deps.sh
  npm --prefix ui ci --no-audit --no-fund
  npm --prefix ui run build
  cargo build --release --locked -p metaclaw
  flags=()
else
  [ -x target/debug/metaclaw ] || { echo "build it first: cargo build -p metaclaw" >&2; exit 1; }
  flags=(--debug)
fi
rm -rf "target/$profile/bundle/deb"
# deb/package.json only renames the package: `metaclaw`, not the kebab-cased product name
# (`meta-claw`); the app keeps its name, MetaClaw, everywhere else.
(cd src-tauri && ./node_modules/.bin/tauri bundle "${flags[@]}" --bundles deb --config deb/package.json --ci)
ls "$PWD"/target/"$profile"/bundle/deb/metaclaw_*.deb
