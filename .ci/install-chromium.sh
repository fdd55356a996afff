#!/bin/sh
# Installs headless Chromium and its WebDriver from Debian's packages, for the web inbox's
# browser test (crates/airlock-gateway/tests/browser.rs). Idempotent: does nothing when both
# binaries are already there. Run as root (CI images) or through sudo.
set -eu

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium and chromedriver already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver
/usr/bin/chromium --version
/usr/bin/chromedriver --version
