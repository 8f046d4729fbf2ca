#!/usr/bin/env bash
# Idempotently install Debian's Chromium and its WebDriver, the headless browser of the
# explorer's tests (tests/test_explorer_browser.py) and of benchmarks/explorer_size.py.
# Quick when both are present; otherwise needs root and apt (Debian 12). apt waits for the dpkg
# lock: the SLURM tests, run by the other pytest worker, may be installing at the same time.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "installing chromium needs root" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "no apt-get to install chromium with" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
echo "[chromium/ensure] installing chromium + chromium-driver"
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
chromium --version
