#!/usr/bin/env bash
# The Debian package as a user gets it: installed with apt (which pulls the libraries it
# declares), its files and desktop entry checked, the installed binary run as a daemon and as
# the desktop app (the desktop smoke test against /usr/bin/metaclaw), then removed, leaving
# nothing but the user's data. CI runs it on the package `scripts/package.sh --debug` makes.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(realpath "${1:?usage: scripts/package-test.sh PATH/metaclaw_VERSION_ARCH.deb}")
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
fail() { echo "package test: $*" >&2; exit 1; }
installed() { dpkg-query -W -f='${Status}' metaclaw 2>/dev/null | grep -q "install ok installed"; }

installed && fail "metaclaw is installed already: remove it first (apt remove metaclaw)"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb"
installed || fail "apt did not install it"

# Only the program, its desktop entry and its icons (and, built for the apt repository, its
# keyring and source): never user data or a login item.
files=$(dpkg -L metaclaw)
while read -r f; do
  [ -d "$f" ] && continue
  case "$f" in
    /usr/bin/metaclaw | /usr/share/applications/metaclaw.desktop | /usr/share/icons/hicolor/*/apps/metaclaw.png) ;;
    /usr/share/keyrings/metaclaw-archive-keyring.gpg | /usr/share/metaclaw/metaclaw.sources) ;;
    *) fail "unexpected file in the package: $f" ;;
  esac
done <<<"$files"
for size in 16 24 32 48 64 128 256 512; do
  [ -f "/usr/share/icons/hicolor/${size}x${size}/apps/metaclaw.png" ] || fail "no ${size}x${size} icon"
done
entry=/usr/share/applications/metaclaw.desktop
desktop-file-validate "$entry"
grep -qx 'Exec=metaclaw' "$entry" || fail "the menu entry does not run metaclaw"
grep -qx 'Icon=metaclaw' "$entry" || fail "the menu entry has not the icon"
[ "$(command -v metaclaw)" = /usr/bin/metaclaw ] || fail "metaclaw on PATH is $(command -v metaclaw)"
want="metaclaw $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
[ "$(metaclaw --version)" = "$want" ] || fail "--version says $(metaclaw --version), not $want"

# The installed binary as a daemon, in a user's home of its own.
user=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(
  export HOME="$user" METACLAW_HOME="$user/.metaclaw" METACLAW_SECRET_BACKEND=file
  mkdir -p "$METACLAW_HOME"
  printf 'proxy:\n  port: %s\n' "$port" >"$METACLAW_HOME/config.yaml"
  metaclaw start --daemon
  status=$(metaclaw status) || fail "status failed while running"
  grep -q '^MetaClaw: running' <<<"$status" || fail "status does not say running: $status"
  metaclaw stop
  # Exit code 3: not running.
  status=$(metaclaw status) && fail "status exits 0 after stop"
  grep -q '^MetaClaw: not running' <<<"$status" || fail "still running after stop: $status"
)

# The desktop app from the installed path: tray, window, start at login, Quit. `--workspace`,
# not `-p`: the same feature resolution as the test run before, so nothing is built again.
METACLAW_BIN=/usr/bin/metaclaw cargo test --workspace --locked --test desktop_smoke

removed=$("${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get remove -y metaclaw 2>&1)
echo "$removed" | grep -q "metaclaw uninstall" || fail "removal did not say how to remove the user's data: $removed"
installed && fail "still installed after apt remove"
while read -r f; do
  [ -d "$f" ] && continue
  [ -e "$f" ] && fail "left behind: $f"
done <<<"$files"
# The user's data stays.
[ -f "$user/.metaclaw/config.yaml" ] && [ -f "$user/.metaclaw/metaclaw.db" ] || fail "the user's data went with the package"
# dpkg keeps a record of a removed package with a postrm (state rc) until it is purged;
# purging removes nothing more, and still not the user's data.
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq metaclaw >/dev/null
dpkg-query -W metaclaw >/dev/null 2>&1 && fail "dpkg still knows metaclaw after apt purge"
[ -f "$user/.metaclaw/config.yaml" ] || fail "apt purge took the user's data"
rm -rf "$user"
echo "package test: $(basename "$deb") installed, ran and was removed cleanly"
