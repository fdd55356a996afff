#!/usr/bin/env bash
# The OpenAI-compatible proxy with the official `openai` Python SDK as its client. Idempotent:
# makes (or reuses) a virtualenv in target/proxy-py-venv with the pinned SDK, then runs the Rust
# test that drives it (`proxy_py`, which starts a loopback upstream and a real gateway and runs
# the SDK against them). AIRLOCK_REQUIRE_PY=1 makes a missing venv a failure, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAI_VERSION=3.54.0   # the SDK version the proxy is tested against
VENV=target/proxy-py-venv
PYTHON=${PYTHON:-python3}

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
if ! "$VENV/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$OPENAI_VERSION')" 2>/dev/null; then
  "$VENV/bin/pip" install -q "openai==$OPENAI_VERSION"
fi

export AIRLOCK_PROXY_PYTHON="$PWD/$VENV/bin/python"
export AIRLOCK_REQUIRE_PY=1
cargo test --locked -p airlock-proxy --test proxy_py -- --nocapture
