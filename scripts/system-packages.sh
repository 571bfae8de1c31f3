#!/usr/bin/env bash
# The system packages the tests need, installed with apt-get when run as root (CI, a fresh machine); idempotent and
# quiet: what is installed already is left alone. Today: Chromium (headless, for the `harness view` browser tests;
# Playwright drives it, and never downloads a browser of its own); strace and util-linux's unshare (the offline
# contract check watches every connection an agent attempts, in a loopback-only network namespace); bubblewrap
# (`harness batch --harbor` runs a Harbor task's tests/test.sh under it; codex's own sandbox uses it when present,
# so the codex tests run as on a machine that has it).
# Not root, or no apt-get: it only says what is missing (install it yourself, or skip `tox -e view`).
set -euo pipefail
packages=(chromium strace util-linux bubblewrap)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "system-packages: missing ${missing[*]}: install them (as root: apt-get install ${missing[*]}); the tests that" \
    "need them fail without them" >&2
  exit 0
fi
echo "system-packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
