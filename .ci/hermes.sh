#!/usr/bin/env bash
# The Hermes Agent plugin (integrations/hermes) against the real hermes-agent package and a real
# `airlock serve`. Idempotent: makes (or reuses) a virtualenv in target/hermes-venv with the
# pinned hermes-agent and pytest, then runs the plugin's tests. Builds nothing: pass the airlock
# binary in AIRLOCK_BIN (default target/debug/airlock). Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

HERMES_AGENT_VERSION=0.19.0   # the version the plugin was written and tested against
PYTEST_VERSION=9.2.0
VENV=target/hermes-venv
PYTHON=${PYTHON:-python3}

AIRLOCK_BIN=${AIRLOCK_BIN:-target/debug/airlock}
if [ ! -x "$AIRLOCK_BIN" ]; then
  echo "hermes.sh: no airlock binary at $AIRLOCK_BIN (build it first, or set AIRLOCK_BIN)" >&2
  exit 1
fi
AIRLOCK_BIN=$(cd "$(dirname "$AIRLOCK_BIN")" && pwd)/$(basename "$AIRLOCK_BIN")
export AIRLOCK_BIN

# hermes-agent supports Python 3.11 to 3.13.
if ! "$PYTHON" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] <= (3, 13)))'; then
  echo "hermes.sh: $PYTHON is $("$PYTHON" --version 2>&1); hermes-agent needs Python 3.11 to 3.13 (set PYTHON)" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    # Debian ships venv (ensurepip) separately.
    rm -rf "$VENV"
    if command -v apt-get >/dev/null; then
      minor=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
      apt-get install -y -qq "python$minor-venv" >/dev/null || apt-get install -y -qq python3-venv >/dev/null
    fi
    "$PYTHON" -m venv "$VENV"
  fi
fi

installed() {
  "$VENV/bin/python" - "$HERMES_AGENT_VERSION" "$PYTEST_VERSION" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    ok = version("hermes-agent") == sys.argv[1] and version("pytest") == sys.argv[2]
except PackageNotFoundError:
    ok = False
sys.exit(0 if ok else 1)
PY
}
if ! installed; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "hermes-agent==$HERMES_AGENT_VERSION" "pytest==$PYTEST_VERSION"
fi

exec "$VENV/bin/python" -m pytest integrations/hermes -q
