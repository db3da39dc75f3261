#!/usr/bin/env bash
# Installs the system packages MetaClaw needs to build and to run its tests on Debian/Ubuntu:
# a C toolchain (bundled SQLite), a D-Bus session with an unlockable Secret Service
# (gnome-keyring) so secrets land in a real keychain, Xlib and XScreenSaver to link keyboard
# idle detection against, and a headless X server with xdotool to test it for real; the
# desktop shell's libraries (Tauri: GTK, WebKitGTK, Ayatana AppIndicator for the tray) and
# gdbus, which the tray test drives the menu with; ImageMagick's `import` for the window
# screenshot, and zbarimg (zbar-tools) to read the WeChat QR code back out of it;
# desktop-file-validate (desktop-file-utils) for the package's menu entry; Debian's Chromium, which the UI's end-to-end tests drive through playwright-core;
# the sqlite3 shell, which a test uses to read the live database as a user would; GnuPG and
# apt-utils' apt-ftparchive for the apt repository: package.sh reads the repository's public
# key with gpg and release.sh indexes and signs the repository, on the release machine, which
# gets its packages from here through package.sh (and scripts/update-test.sh runs both).
set -euo pipefail

packages=(build-essential pkg-config dbus dbus-x11 gnome-keyring libsecret-tools procps sqlite3
  libx11-dev libxss-dev xvfb xdotool
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev
  libxdo-dev libglib2.0-bin imagemagick zbar-tools desktop-file-utils chromium gnupg apt-utils)
# With --tests, also what only the tests need and a user's machine should not get from
# installing MetaClaw: GNOME's compositor (mutter), run headless to test Wayland idle
# detection against (installing it registers an X window manager alternative).
if [ "${1:-}" = "--tests" ]; then
  packages+=(mutter)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v cargo >/dev/null || { echo "Rust is required: https://rustup.rs" >&2; exit 1; }
