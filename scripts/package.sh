#!/usr/bin/env bash
# Builds MetaClaw's Debian package with Tauri's bundler: the web UI (embedded in the binary),
# the release binary, then target/release/bundle/deb/metaclaw_<version>_<arch>.deb with the
# binary in /usr/bin, the desktop entry, the icons from icons/app/ at every size, and the
# libraries it needs declared, so `apt install ./metaclaw_*.deb` pulls them.
#
#   scripts/package.sh           the release package (what users install)
#   scripts/package.sh --debug   packages the debug build already made, for CI's package test
#
# Build-time settings, from the environment (docs/packaging.md, "Updates and the apt repository"):
#
#   METACLAW_APT_URL       the apt repository's base URL (https://…), and
#   METACLAW_APT_KEY       the path to its PUBLIC key (armored or binary): with both, the package
#                          brings the repository: its keyring and its apt source
#   METACLAW_APT_CHANNEL   the repository's suite the package follows: stable (default) or beta
#   METACLAW_DEB_VERSION   the package's version, X.Y.Z (default: the workspace's, Cargo.toml)
#
# Without URL and key (a developer's package) it adds no apt source, and says so.
# Prints the package's path last.
set -euo pipefail
fail() { echo "package.sh: $*" >&2; exit 1; }
key=${METACLAW_APT_KEY:-}
if [ -n "$key" ]; then
  [ -f "$key" ] || fail "METACLAW_APT_KEY: no file $key"
  key=$(realpath "$key")
fi
cd "$(dirname "$0")/.."
profile=release
if [ "${1:-}" = "--debug" ]; then
  profile=debug
fi
# The build dependencies first: gpg reads the key below.
if [ "$profile" = release ]; then
  bash scripts/deps.sh
fi

# The per-build settings go to a config generated here, merged over tauri.conf.json by the
# bundler: nothing of a build's URL or key is written into tracked files.
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
config=()
url=${METACLAW_APT_URL:-}
channel=${METACLAW_APT_CHANNEL:-stable}
version=${METACLAW_DEB_VERSION:-}
case "$channel" in
  stable | beta) ;;
  *) fail "METACLAW_APT_CHANNEL is '$channel': stable or beta" ;;
esac
if [ -n "$version" ]; then
  # Tauri takes only a semver version and writes it as the Debian version as it is, and dpkg
  # orders a semver pre-release (0.2.0-beta.1) after its release (0.2.0): plain X.Y.Z only.
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    fail "METACLAW_DEB_VERSION is '$version': X.Y.Z only (dpkg would order a pre-release after its release)"
  config+=(--config "{\"version\": \"$version\"}")
fi
if [ -n "$url" ] || [ -n "$key" ]; then
  if [ -z "$url" ] || [ -z "$key" ]; then
    fail "METACLAW_APT_URL and METACLAW_APT_KEY go together (the repository, and the key it is signed with)"
  fi
  [[ "$url" =~ ^https?://[^[:space:]\"\\]+$ ]] || fail "METACLAW_APT_URL is '$url': an http:// or https:// URL"
  # Only public keys go into the package: refuse a private key, or a file holding no key.
  keys=$(GNUPGHOME="$gen" gpg --batch --quiet --show-keys --with-colons "$key" 2>/dev/null) ||
    fail "METACLAW_APT_KEY: $key is not an OpenPGP key"
  grep -q '^sec' <<<"$keys" && fail "METACLAW_APT_KEY: $key holds a PRIVATE key; give the public key (gpg --export)"
  grep -q '^pub' <<<"$keys" || fail "METACLAW_APT_KEY: $key holds no public key"
  # apt reads a keyring in OpenPGP's binary form under a .gpg name.
  if grep -q -- '-----BEGIN PGP PUBLIC KEY BLOCK-----' "$key"; then
    GNUPGHOME="$gen" gpg --batch --quiet --dearmor <"$key" >"$gen/metaclaw-archive-keyring.gpg"
  else
    cp "$key" "$gen/metaclaw-archive-keyring.gpg"
  fi
  chmod 0644 "$gen/metaclaw-archive-keyring.gpg"
  cat >"$gen/metaclaw.sources" <<SOURCES
Types: deb
URIs: $url
Suites: $channel
Components: main
Signed-By: /usr/share/keyrings/metaclaw-archive-keyring.gpg
SOURCES
  cat >"$gen/apt.json" <<JSON
{"bundle": {"linux": {"deb": {"files": {
  "/usr/share/keyrings/metaclaw-archive-keyring.gpg": "$gen/metaclaw-archive-keyring.gpg",
  "/usr/share/metaclaw/metaclaw.sources": "$gen/metaclaw.sources"
}}}}}
JSON
  config+=(--config "$gen/apt.json")
  echo "package.sh: the package follows $url, suite $channel" >&2
else
  echo "package.sh: METACLAW_APT_URL and METACLAW_APT_KEY are not set: the package adds no apt source (it will not update with apt)" >&2
fi

# Tauri's CLI from npm (its binary is inside the package; nothing else is downloaded).
npm --prefix src-tauri ci --no-audit --no-fund --loglevel=error
if [ "$profile" = release ]; then
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
(cd src-tauri && ./node_modules/.bin/tauri bundle "${flags[@]}" --bundles deb --config deb/package.json "${config[@]}" --ci)
ls "$PWD"/target/"$profile"/bundle/deb/metaclaw_*.deb
