#!/usr/bin/env bash
# The MCP gateway against the official MCP Python SDK. Idempotent: makes (or reuses) a virtualenv
# in target/mcp-venv with the pinned `mcp` package, then runs the Rust test that drives an SDK
# client through `airlock mcp wrap` to an SDK server, with AIRLOCK_REQUIRE_PY=1 so a missing venv
# fails instead of skipping. Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0   # the SDK version the gateway was tested against
VENV=target/mcp-venv
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
  rm -rf "$VENV"
  mkdir -p target
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    # Debian ships venv (ensurepip) separately.
    rm -rf "$VENV"
    if command -v apt-get >/dev/null; then
      apt-get install -y -qq python3-venv >/dev/null
    fi
    "$PYTHON" -m venv "$VENV"
  fi
fi
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
  "$VENV/bin/pip" install -q "mcp==$MCP_VERSION"
fi

AIRLOCK_REQUIRE_PY=1 cargo test --locked -p airlock --test cli mcp_py -- --nocapture
