#!/usr/bin/env bash
# MetaClaw updating through its signed apt repository, as a user's machine does. It makes two
# packages with scripts/package.sh: version N (the workspace's) from the debug build
# (target/debug/metaclaw), and N+1 (the next patch version) from the same code built again
# stamped N+1 (METACLAW_VERSION; only the binary crate is rebuilt), both following a repository
# served on 127.0.0.1 and trusting a throwaway key; it builds that repository holding N+1 with
# scripts/release.sh, signed with that key, and checks that:
#
#   - a repository signed with another key at the same URL is refused: apt offers no update,
#     and `metaclaw update check` reports none, and why;
#   - N installed brings its source and keyring; `apt-get update` trusts the repository and
#     offers N+1; `metaclaw update check` and a running daemon's `metaclaw status` report it
#     (the daemon's provider key in a throwaway keychain on a session bus of the test's own);
#   - `apt-get install --only-upgrade` installs N+1 under a running desktop app (as N), which
#     offers "Restart MetaClaw (N+1)" and comes back as N+1 with the same home, config and
#     secrets (the desktop smoke test's restart test, on /usr/bin/metaclaw); the daemon's
#     status says to restart, and started again it is N+1 with the same config, reading its
#     key from the same keychain entry;
#   - source and keyring stay through the upgrade; `apt-get remove` leaves neither;
#     `apt-get purge` then works.
#
#   scripts/update-test.sh     (CI runs it from scripts/test.sh, after package-test.sh)
#
# It installs and removes the package (with sudo when not root), like package-test.sh: run
# neither while the other runs. It updates apt's lists of this repository only; everything it
# adds (the package, the source, the lists, the server) is gone when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
as_root() { "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive "$@"; }
fail() { echo "update test: $*" >&2; exit 1; }
installed() { dpkg-query -W -f='${Status}' metaclaw 2>/dev/null | grep -q "install ok installed"; }
installed_version() { dpkg-query -W -f='${Version}' metaclaw; }
candidate() { apt-cache policy metaclaw | sed -n 's/^  Candidate: //p'; }
source_file=/etc/apt/sources.list.d/metaclaw.sources
keyring=/usr/share/keyrings/metaclaw-archive-keyring.gpg

[ -x target/debug/metaclaw ] || fail "build it first: cargo build -p metaclaw"
installed && fail "metaclaw is installed already: remove it first (apt remove metaclaw)"
[ -e "$source_file" ] && fail "$source_file exists already: remove it first"

# N is the workspace's version, what the binary says it is; N+1 the next patch version.
old=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[[ "$old" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || fail "the workspace version $old is not X.Y.Z"
new="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))"
dpkg --compare-versions "$old" lt "$new" || fail "dpkg does not order $old before $new"

tmp=$(mktemp -d)
server=""
port=""
cleanup() {
  local status=$?
  # The daemon engine_checks started, while /usr/bin/metaclaw is there; then its session
  # bus (the keyring daemon leaves with it).
  if [ -x /usr/bin/metaclaw ] && [ -d "$tmp/user" ]; then
    HOME="$tmp/user" METACLAW_HOME="$tmp/user/.metaclaw" metaclaw stop >/dev/null 2>&1 || true
  fi
  if [ -n "${bus_pid:-}" ]; then
    kill "$bus_pid" 2>/dev/null || true
  fi
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  # Purged, not only removed: dpkg keeps a removed package with a postrm until purged.
  if dpkg-query -W metaclaw >/dev/null 2>&1; then
    as_root apt-get purge -y -qq metaclaw >/dev/null 2>&1 || true
  fi
  # Nothing of this test stays in apt: the source (none was there before it), its lists, the
  # package it downloaded.
  as_root rm -f "$source_file" "/var/cache/apt/archives/metaclaw_${new}_"*.deb
  if [ -n "$port" ]; then
    as_root find /var/lib/apt/lists /var/lib/apt/lists/partial -maxdepth 1 -name "127.0.0.1:${port}_*" -delete 2>/dev/null || true
  fi
  for home in "$tmp"/gnupg-*; do
    [ -d "$home" ] && gpgconf --homedir "$home" --kill gpg-agent 2>/dev/null
  done
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Two throwaway keys, without passphrase: the repository's, and another one.
make_key() {
  local home="$tmp/gnupg-$1"
  mkdir -m 0700 "$home"
  GNUPGHOME="$home" gpg --batch --quiet --passphrase '' --quick-gen-key "MetaClaw update test $1 <update-test@metaclaw.invalid>" ed25519 sign 1d 2>/dev/null
  GNUPGHOME="$home" gpg --batch --armor --export >"$tmp/$1.asc"
}
make_key repository
make_key other

# The server first, on a port the kernel picks, so the packages can be built for its URL. It
# serves $tmp/www, a link to the repository being tried.
mkdir "$tmp/good"
ln -s good "$tmp/www"
: >"$tmp/server.log"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 300); do
  port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\) .*/\1/p' "$tmp/server.log")
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || fail "the repository's server did not start: $(cat "$tmp/server.log")"
url="http://127.0.0.1:$port"

# N and N+1, packaged for this repository and key (armored: package.sh dearmors it into the
# keyring). N+1's binary is the same code stamped N+1.
package() {
  local deb
  deb=$(METACLAW_APT_URL="$url" METACLAW_APT_KEY="$tmp/repository.asc" METACLAW_APT_CHANNEL=stable \
    METACLAW_DEB_VERSION="$1" bash scripts/package.sh --debug | tail -n 1)
  cp "$deb" "$tmp/"
  echo "$tmp/$(basename "$deb")"
}
[ "$(target/debug/metaclaw --version)" = "metaclaw $old" ] || fail "target/debug/metaclaw is not $old"
old_deb=$(package "$old")
METACLAW_VERSION="$new" cargo build --locked -q -p metaclaw
[ "$(target/debug/metaclaw --version)" = "metaclaw $new" ] || fail "the binary stamped $new says $(target/debug/metaclaw --version)"
new_deb=$(package "$new")
[ "$(dpkg-deb -f "$old_deb" Version)" = "$old" ] || fail "$old_deb is not version $old"
[ "$(dpkg-deb -f "$new_deb" Version)" = "$new" ] || fail "$new_deb is not version $new"

# The repository holding N+1, signed with its key; and the same files signed with the other
# key, as a repository that is not MetaClaw's would be.
METACLAW_SIGNING_KEY="$(GNUPGHOME="$tmp/gnupg-repository" gpg --batch --armor --export-secret-keys)" \
  METACLAW_APT_CHANNEL=stable METACLAW_APT_URL="$url" bash scripts/release.sh "$tmp/good" "$new_deb"
cp -r "$tmp/good" "$tmp/other"
rm "$tmp/other/dists/stable/InRelease" "$tmp/other/dists/stable/Release.gpg"
for sig in "--clearsign --output InRelease" "--armor --detach-sign --output Release.gpg"; do
  # shellcheck disable=SC2086 # the options, split on purpose
  (cd "$tmp/other/dists/stable" && GNUPGHOME="$tmp/gnupg-other" gpg --batch --quiet $sig Release)
done

apt_opts=(-o Acquire::http::Proxy::127.0.0.1=DIRECT)
# `apt-get update` of this source only, keeping the lists of the others.
apt_update() {
  as_root apt-get update "${apt_opts[@]}" -o Dir::Etc::sourcelist="$source_file" \
    -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 2>&1
}
signature_error='NO_PUBKEY|not signed|GPG error|BADSIG|signatures were invalid|signature'

# MetaClaw's own side of updating, checked at each step, as a user in a home of their own
# with a desktop session's keychain: a session bus of its own and a throwaway unlocked
# keyring, where the daemon's provider key lives.
user_home="$tmp/user"
mkdir -p "$user_home/.metaclaw" "$tmp/keyrings"
bus=$(dbus-daemon --session --fork --print-address=1 --print-pid=1)
bus_address=$(sed -n 1p <<<"$bus")
bus_pid=$(sed -n 2p <<<"$bus")
as_user() {
  HOME="$user_home" METACLAW_HOME="$user_home/.metaclaw" METACLAW_SECRET_BACKEND=keychain \
    DBUS_SESSION_BUS_ADDRESS="$bus_address" XDG_DATA_HOME="$tmp/keyrings" "$@"
}
echo -n "throwaway-update-test-keyring" | as_user gnome-keyring-daemon --unlock --components=secrets >/dev/null
key_source() { python3 -c 'import json, sys; print(json.load(sys.stdin)["upstreams"][0]["key_source"])'; }
json_field() { python3 -c 'import json, sys; v = json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$1"; }
# `metaclaw status` once its update line says $1 (bounded).
status_says() {
  local out
  for _ in $(seq 300); do
    out=$(as_user metaclaw status 2>&1) || true
    grep -qF "update:     $1" <<<"$out" && return 0
    sleep 0.1
  done
  fail "metaclaw status does not say \"update:     $1\": $out"
}
engine_checks() {
  local out
  case "$1" in
    wrong-key)
      # Not running: the check reads the source the package installed, and trusts nothing
      # gpgv does not verify with the package's keyring.
      if out=$(as_user metaclaw update check --json); then
        fail "update check did not fail on a repository signed with another key: $out"
      fi
      [ -z "$(json_field available <<<"$out")" ] || fail "update check offered an update from a repository signed with another key: $out"
      json_field error <<<"$out" | grep -q "signature does not verify" || fail "update check did not say the signature does not verify: $out"
      ;;
    available)
      out=$(as_user metaclaw update check --json) || fail "update check failed: $out"
      [ "$(json_field available <<<"$out")" = "$new" ] || fail "update check does not offer $new: $out"
      [ "$(json_field current <<<"$out")" = "$old" ] || fail "update check does not say $old runs: $out"
      ;;
    before-upgrade)
      daemon_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      printf '# mine\nllm:\n  provider: custom\n  api: openai\n  api_base: http://127.0.0.1:9/v1\n  model_id: m\nproxy:\n  port: %s  # kept\n' \
        "$daemon_port" >"$user_home/.metaclaw/config.yaml"
      printf 'sk-update-test\n' | as_user metaclaw config set llm.api_key >/dev/null
      as_user metaclaw start --daemon
      out=$(as_user metaclaw status --json)
      [ "$(key_source <<<"$out")" = keychain ] || fail "the provider key is not read from the keychain: $out"
      cp "$user_home/.metaclaw/config.yaml" "$tmp/config.before"
      # Looked for at start: the newer version is in status.
      status_says "MetaClaw $new is available (running $old); to install it: your system's updater, or: sudo apt update && sudo apt upgrade metaclaw"
      ;;
    upgraded)
      [ "$(metaclaw --version)" = "metaclaw $new" ] || fail "--version says $(metaclaw --version) after the upgrade to $new"
      # The daemon still runs N, and says a restart runs N+1.
      status_says "MetaClaw $new is installed (running $old): restart MetaClaw to use it"
      as_user metaclaw stop
      as_user metaclaw start --daemon
      out=$(as_user metaclaw status --json) || fail "status failed after the restart: $out"
      [ "$(json_field version <<<"$out")" = "$new" ] || fail "the restarted daemon is not $new: $out"
      [ "$(key_source <<<"$out")" = keychain ] || fail "$new does not read the provider key from the keychain: $out"
      status_says "up to date ($new)"
      cmp -s "$user_home/.metaclaw/config.yaml" "$tmp/config.before" || fail "the upgrade changed the daemon's config"
      as_user metaclaw stop
      ;;
  esac
}

# N, from its file: it brings the source and the keyring.
as_root apt-get install -y -qq "${apt_opts[@]}" "$old_deb" >/dev/null
if ! installed || [ "$(installed_version)" != "$old" ]; then
  fail "apt did not install $old"
fi
[ -f "$keyring" ] || fail "no keyring at $keyring"
GNUPGHOME="$tmp/gnupg-repository" gpg --batch --export | cmp -s - "$keyring" ||
  fail "$keyring is not the repository's key in binary form"
[ -f "$source_file" ] || fail "installing the package added no $source_file"
want=$(printf 'Types: deb\nURIs: %s\nSuites: stable\nComponents: main\nSigned-By: %s' "$url" "$keyring")
[ "$(cat "$source_file")" = "$want" ] || fail "$source_file is not the repository's source: $(cat "$source_file")"

# Another key's repository at the same URL: refused, however apt words it (an error exit, or
# the signature's error), and never offered.
ln -sfn other "$tmp/www"
if out=$(apt_update); then refused_by_exit=0; else refused_by_exit=1; fi
grep -q "127.0.0.1:$port stable InRelease" <<<"$out" || fail "apt-get update did not fetch InRelease: $out"
[ "$refused_by_exit" = 1 ] || grep -Eqi "$signature_error" <<<"$out" ||
  fail "apt-get update took a repository signed with another key: $out"
[ "$(candidate)" = "$old" ] || fail "apt offers $(candidate) from a repository signed with another key"
apt-cache policy metaclaw | grep -q "127.0.0.1:$port" && fail "apt lists the repository signed with another key: $(apt-cache policy metaclaw)"
engine_checks wrong-key

# The repository's own: trusted (fetched through InRelease, no warning) and offering N+1.
ln -sfn good "$tmp/www"
out=$(apt_update) || fail "apt-get update failed: $out"
grep -Eqi "$signature_error" <<<"$out" && fail "apt-get update warned about the signature: $out"
grep -Eq '^(W|E):' <<<"$out" && fail "apt-get update warned: $out"
grep -q "127.0.0.1:$port stable InRelease" <<<"$out" || fail "apt-get update did not fetch the signed InRelease: $out"
policy=$(apt-cache policy metaclaw)
[ "$(candidate)" = "$new" ] || fail "apt offers $(candidate), not $new: $policy"
if ! grep -q "$new 500" <<<"$policy" || ! grep -q "http://127.0.0.1:$port stable/main" <<<"$policy"; then
  fail "$new is not offered by the repository at $url: $policy"
fi
engine_checks available

# The upgrade, as `apt upgrade` would do it; the source and keyring stay. The old package's
# postrm keeps the source on an upgrade: asked directly, as the new postinst rewrites it after.
as_root /var/lib/dpkg/info/metaclaw.postrm upgrade "$new"
[ -f "$source_file" ] || fail "the postrm deletes $source_file on an upgrade"
engine_checks before-upgrade
# The upgrade itself runs inside the desktop app's restart test: the app (N, from
# /usr/bin/metaclaw) sees its program file replaced, offers "Restart MetaClaw (N+1)", and comes
# back as N+1 with the same home, config and secrets.
upgrade="${sudo_cmd[*]} env DEBIAN_FRONTEND=noninteractive apt-get install --only-upgrade -y -qq ${apt_opts[*]} metaclaw"
METACLAW_BIN=/usr/bin/metaclaw METACLAW_UPGRADE_COMMAND="$upgrade" METACLAW_UPGRADE_TO="$new" \
  cargo test --workspace --locked -q --test desktop_smoke -- --exact a_replaced_program_is_offered_as_a_restart_and_comes_back_the_same
[ "$(installed_version)" = "$new" ] || fail "the upgrade left $(installed_version), not $new"
[ "$(cat "$source_file" 2>/dev/null)" = "$want" ] || fail "$source_file did not survive the upgrade"
GNUPGHOME="$tmp/gnupg-repository" gpg --batch --export | cmp -s - "$keyring" ||
  fail "$keyring did not survive the upgrade"
engine_checks upgraded

# Removed: neither source nor keyring stays.
as_root apt-get remove -y -qq metaclaw >/dev/null
installed && fail "still installed after apt remove"
[ -e "$source_file" ] && fail "apt remove left $source_file"
[ -e "$keyring" ] && fail "apt remove left $keyring"
[ -e /usr/share/metaclaw ] && fail "apt remove left /usr/share/metaclaw"
# dpkg keeps the removed package's record (state rc: it has a postrm) until it is purged.
as_root apt-get purge -y -qq metaclaw >/dev/null
dpkg-query -W metaclaw >/dev/null 2>&1 && fail "dpkg still knows metaclaw after apt purge: $(dpkg -l metaclaw | tail -n 1)"
echo "update test: $old → $new through the signed repository, another key's refused, nothing left ($((SECONDS - started)) s)"
