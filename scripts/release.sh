#!/usr/bin/env bash
# Builds MetaClaw's signed apt repository from packages scripts/package.sh made, in OUT_DIR,
# ready to be served as it is at the METACLAW_APT_URL the packages were built with:
#
#   pool/main/m/metaclaw/metaclaw_<version>_<arch>.deb        every package ever published
#   dists/<channel>/main/binary-<arch>/Packages, Packages.gz   the packages given here, only
#   dists/<channel>/Release, InRelease (clearsigned), Release.gpg (detached signature)
#
#   METACLAW_SIGNING_KEY="$(cat key.asc)" scripts/release.sh OUT_DIR metaclaw_0.2.0_amd64.deb [more.deb …]
#
# From the environment:
#
#   METACLAW_SIGNING_KEY         the repository's armored PRIVATE key itself (from the release
#                                machine's secret store; never a file in the repository). It is
#                                imported into a throwaway GNUPGHOME, deleted when this ends.
#   METACLAW_SIGNING_PASSPHRASE  its passphrase, if it has one
#   METACLAW_APT_CHANNEL         the suite to publish to: stable (default) or beta
#   METACLAW_APT_URL             if set, every package must follow this URL
#
# Each package must be one built for this repository and channel (the source it brings names
# the suite), and its keyring must hold the signing key, or users who install it could not
# check the next update. dists/<channel> is rebuilt from the packages given (give every
# version the channel should offer, usually the newest); other channels and the pool stay.
# A pool file is never replaced by a different one: a new build needs a new version.
# Publish pool/ before dists/, so that no index names a file not there yet.
set -euo pipefail
fail() { echo "release.sh: $*" >&2; exit 1; }
[ $# -ge 2 ] || fail "usage: scripts/release.sh OUT_DIR PACKAGE.deb [PACKAGE.deb …]"
[ -n "${METACLAW_SIGNING_KEY:-}" ] ||
  fail "METACLAW_SIGNING_KEY is not set: it holds the repository's armored private key (gpg --armor --export-secret-keys KEY)"
grep -q -- '-----BEGIN PGP PRIVATE KEY BLOCK-----' <<<"$METACLAW_SIGNING_KEY" ||
  fail "METACLAW_SIGNING_KEY is not an armored private key (gpg --armor --export-secret-keys KEY)"
command -v apt-ftparchive >/dev/null || fail "apt-ftparchive is required: apt-get install apt-utils (scripts/deps.sh)"
channel=${METACLAW_APT_CHANNEL:-stable}
case "$channel" in
  stable | beta) ;;
  *) fail "METACLAW_APT_CHANNEL is '$channel': stable or beta" ;;
esac
mkdir -p "$1"
out=$(realpath "$1")
shift
debs=()
for deb in "$@"; do
  [ -f "$deb" ] || fail "no file $deb"
  debs+=("$(realpath "$deb")")
done

work=$(mktemp -d)
export GNUPGHOME="$work/gnupg"
cleanup() {
  gpgconf --homedir "$GNUPGHOME" --kill gpg-agent 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --quiet --import <<<"$METACLAW_SIGNING_KEY" 2>/dev/null || fail "METACLAW_SIGNING_KEY could not be imported"
fpr=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')
[ -n "$fpr" ] || fail "METACLAW_SIGNING_KEY holds no private key"
gpg --batch --export "$fpr" >"$work/signing-key.gpg"
echo "release.sh: signing with $fpr" >&2

# Each package: a whole Debian package named metaclaw, the suite (and URL) of the source it
# brings, its keyring. Its pool name is made from its control fields, whatever its file name.
pool=pool/main/m/metaclaw
mkdir "$work/keyrings"
archs=()
names=()
seen=" "
for i in "${!debs[@]}"; do
  deb=${debs[$i]}
  given=$(basename "$deb")
  if ! dpkg-deb --info "$deb" >/dev/null 2>&1 || ! dpkg-deb --fsys-tarfile "$deb" | tar -t >/dev/null 2>&1; then
    fail "$given is not a whole Debian package"
  fi
  [ "$(dpkg-deb -f "$deb" Package)" = metaclaw ] || fail "$given is not a metaclaw package"
  arch=$(dpkg-deb -f "$deb" Architecture)
  name="metaclaw_$(dpkg-deb -f "$deb" Version)_$arch.deb"
  [[ "$seen" != *" $name "* ]] || fail "$name is given twice"
  seen+="$name "
  names+=("$name")
  [[ " ${archs[*]} " == *" $arch "* ]] || archs+=("$arch")
  source=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*usr/share/metaclaw/metaclaw.sources' 2>/dev/null) ||
    fail "$given brings no apt source: build it with METACLAW_APT_URL and METACLAW_APT_KEY (scripts/package.sh)"
  suite=$(sed -n 's/^Suites: //p' <<<"$source")
  [ "$suite" = "$channel" ] || fail "$given follows the suite '$suite', not '$channel' (METACLAW_APT_CHANNEL when it was built)"
  if [ -n "${METACLAW_APT_URL:-}" ]; then
    uri=$(sed -n 's/^URIs: //p' <<<"$source")
    [ "$uri" = "$METACLAW_APT_URL" ] || fail "$given follows $uri, not $METACLAW_APT_URL"
  fi
  dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*usr/share/keyrings/metaclaw-archive-keyring.gpg' >"$work/keyrings/$i.gpg" 2>/dev/null ||
    fail "$given brings no keyring"
  # A version is published once: a file already in the pool must be this very package.
  if [ -e "$out/$pool/$name" ]; then
    cmp -s "$deb" "$out/$pool/$name" || fail "$pool/$name is published already, with other contents: give the new build a new version (METACLAW_DEB_VERSION)"
  fi
done

# The channel's indices, built beside the repository (the packages copied where they will be
# served from, so that Filename is pool/…; apt-ftparchive would name a symlink's target) and
# moved into place once signed and checked.
stage="$work/repo/dists/$channel"
mkdir -p "$work/repo/$pool"
for arch in "${archs[@]}"; do
  dir="$stage/main/binary-$arch"
  mkdir -p "$dir"
  for i in "${!debs[@]}"; do
    [ "$(dpkg-deb -f "${debs[$i]}" Architecture)" = "$arch" ] || continue
    cp "${debs[$i]}" "$work/repo/$pool/${names[$i]}"
    # apt-ftparchive reports a bad package on stderr and still exits 0: check what it wrote.
    entry=$(cd "$work/repo" && apt-ftparchive packages "$pool/${names[$i]}" 2>"$work/ftparchive.err")
    if [ -s "$work/ftparchive.err" ] || ! grep -qx 'Package: metaclaw' <<<"$entry" || ! grep -q '^SHA256: ' <<<"$entry"; then
      cat "$work/ftparchive.err" >&2
      fail "apt-ftparchive could not index ${names[$i]}"
    fi
    printf '%s\n\n' "$entry"
  done >"$dir/Packages"
  gzip -9n <"$dir/Packages" >"$dir/Packages.gz"
done
apt-ftparchive \
  -o APT::FTPArchive::Release::Origin=MetaClaw \
  -o APT::FTPArchive::Release::Label=MetaClaw \
  -o APT::FTPArchive::Release::Suite="$channel" \
  -o APT::FTPArchive::Release::Codename="$channel" \
  -o APT::FTPArchive::Release::Components=main \
  -o APT::FTPArchive::Release::Architectures="${archs[*]}" \
  -o APT::FTPArchive::Release::Description="MetaClaw, $channel" \
  release "$stage" >"$work/Release"
mv "$work/Release" "$stage/Release"

sign=(gpg --batch --yes --local-user "$fpr" --digest-algo SHA512)
if [ -n "${METACLAW_SIGNING_PASSPHRASE:-}" ]; then
  printf '%s' "$METACLAW_SIGNING_PASSPHRASE" >"$work/passphrase"
  sign+=(--pinentry-mode loopback --passphrase-file "$work/passphrase")
fi
signing_failed="could not sign with $fpr (a key with a passphrase needs METACLAW_SIGNING_PASSPHRASE)"
"${sign[@]}" --clearsign --output "$stage/InRelease" "$stage/Release" </dev/null || fail "$signing_failed"
"${sign[@]}" --armor --detach-sign --output "$stage/Release.gpg" "$stage/Release" </dev/null || fail "$signing_failed"

# What apt will do: check both signatures with the key, and with each package's keyring.
gpgv --quiet --keyring "$work/signing-key.gpg" "$stage/InRelease" 2>/dev/null ||
  fail "InRelease does not verify with the signing key"
gpgv --quiet --keyring "$work/signing-key.gpg" "$stage/Release.gpg" "$stage/Release" 2>/dev/null ||
  fail "Release.gpg does not verify with the signing key"
for i in "${!debs[@]}"; do
  gpgv --quiet --keyring "$work/keyrings/$i.gpg" "$stage/InRelease" 2>/dev/null ||
    fail "$(basename "${debs[$i]}")'s keyring does not hold the signing key $fpr: who installs it could not check the next update"
done

mkdir -p "$out/$pool"
for i in "${!debs[@]}"; do
  [ -e "$out/$pool/${names[$i]}" ] || mv "$work/repo/$pool/${names[$i]}" "$out/$pool/"
done
rm -rf "$out/dists/$channel"
mkdir -p "$out/dists"
mv "$stage" "$out/dists/$channel"
echo "release.sh: $out/dists/$channel: ${#debs[@]} package(s), ${archs[*]}, signed by $fpr" >&2
