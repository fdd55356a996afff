"""Turning one Hermes tool call into the action airlock decides on.

A shell tool with a command line becomes a shell action (`{"kind":"shell","command","session",
"cwd"}`), which airlock analyses command by command; every other tool, a shell tool without a
command line included, becomes a tool action (`{"kind":"tool","tool","arguments","session"}`),
which the policy must declare or it is denied.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional

from .settings import SHELL_TOOLS

# The daemon accepts a session of 1 to 128 characters without control characters.
MAX_SESSION_CHARS = 128
FALLBACK_SESSION = "hermes"


def session_of(override: Optional[str], session_id: str, task_id: str) -> str:
    """AIRLOCK_SESSION wins (as for airlock's other hooks), then Hermes's session, then its task."""
    for candidate in (override, session_id, task_id):
        if isinstance(candidate, str):
            cleaned = "".join(c for c in candidate if c.isprintable()).strip()
            if cleaned:
                return cleaned[:MAX_SESSION_CHARS]
    return FALLBACK_SESSION


def action_for(
    tool_name: str,
    args: Mapping[str, Any],
    session: str,
    task_id: str = "",
) -> dict:
    command = _command_of(tool_name, args)
    if command is not None:
        action: dict = {"kind": "shell", "command": command, "session": session}
        cwd = _cwd_of(args, task_id)
        if cwd is not None:
            action["cwd"] = cwd
        return action
    return {
        "kind": "tool",
        "tool": tool_name,
        "arguments": _plain_json(args),
        "session": session,
    }


def _command_of(tool_name: str, args: Mapping[str, Any]) -> Optional[str]:
    if tool_name not in SHELL_TOOLS:
        return None
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def _cwd_of(args: Mapping[str, Any], task_id: str) -> Optional[str]:
    """Where the command will run, so the daemon applies that project's policy.

    Hermes's terminal tool runs in its `workdir` argument when given, else in the directory the
    session last `cd`-ed to, else TERMINAL_CWD, else the process's directory.
    """
    base = _session_cwd(task_id) or os.environ.get("TERMINAL_CWD") or os.getcwd()
    workdir = args.get("workdir")
    if isinstance(workdir, str) and workdir.strip():
        path = os.path.expanduser(workdir.strip())
        cwd = path if os.path.isabs(path) else os.path.join(base, path)
    else:
        cwd = base
    cwd = os.path.expanduser(cwd)
    return os.path.normpath(cwd) if os.path.isabs(cwd) else None


def _session_cwd(task_id: str) -> Optional[str]:
    try:
        from tools.terminal_tool import get_session_cwd
    except Exception:  # outside Hermes, or a Hermes without per-session directories
        return None
    try:
        cwd = get_session_cwd(task_id or None)
    except Exception:
        return None
    return cwd if isinstance(cwd, str) and cwd else None


def _plain_json(args: Mapping[str, Any]) -> Any:
    """The arguments as plain JSON (Hermes passes what the model sent, already JSON-shaped; a
    stray non-JSON value is shown as its text rather than dropped)."""
    return json.loads(json.dumps(dict(args), ensure_ascii=False, default=str))
