"""Asking the daemon about one tool call and waiting for the answer.

`check` returns None when the daemon said "allowed" and otherwise the message Hermes shows the
model as the tool's result. Only an explicit "allowed" lets a call run: a denial, a pending
approval nobody answered in time (silence is not consent), an unreachable daemon, an error, or
an answer this plugin does not understand all block.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Mapping, Optional
from urllib.parse import quote

from . import actions, settings
from .client import ApiError, Client, DaemonError, Unreachable

log = logging.getLogger(__name__)

PREFIX = "BLOCKED by airlock"


def check(
    tool_name: str,
    args: Mapping[str, Any],
    session_id: str = "",
    task_id: str = "",
    env: Optional[Mapping[str, str]] = None,
) -> Optional[str]:
    try:
        conf = settings.load(env)
    except settings.ConfigError as e:
        return (
            f"{PREFIX}: {e}. Every tool call is blocked until airlock can be asked (fail "
            "closed); tell the user."
        )
    session = actions.session_of(conf.session, session_id, task_id)
    action = actions.action_for(tool_name, args, session, task_id)
    client = Client(conf.url, conf.token, conf.key, conf.key_file)
    try:
        out = _ask(client, action, conf.max_wait_s)
    except Unreachable as e:
        return (
            f"{PREFIX}: {e}. Every tool call is blocked while the daemon is unreachable (fail "
            "closed); tell the user to start it with `airlock serve`."
        )
    except ApiError as e:
        return f"{PREFIX}: the daemon refused the request: {e}. Nothing was run."
    except DaemonError as e:
        return f"{PREFIX}: {e}. Nothing was run (fail closed)."
    return _verdict(out, conf.max_wait_s)


def _ask(client: Client, action: dict, max_wait_s: float) -> dict:
    """Submits, then long-polls while pending; returns the last answer (pending when the wait
    ran out)."""
    started = time.monotonic()
    out = client.post("/v1/actions", action, settings.SUBMIT_TIMEOUT_S)
    while out.get("status") == "pending":
        left = max_wait_s - (time.monotonic() - started)
        if left <= 0:
            break
        ident = out.get("id")
        if not isinstance(ident, str) or not ident:
            raise DaemonError("the daemon answered pending without an approval id")
        wait = max(1, min(settings.POLL_S, math.ceil(left)))
        path = f"/v1/actions/{quote(ident, safe='')}/wait?timeout={wait}"
        out = client.get(path, wait + 10)
    return out


def _verdict(out: dict, max_wait_s: float) -> Optional[str]:
    status = out.get("status")
    ident = out.get("id") if isinstance(out.get("id"), str) else "?"
    message = out.get("message") if isinstance(out.get("message"), str) else ""
    if status == "allowed":
        log.debug("airlock allowed %s: %s", ident, message)
        return None
    if status == "denied":
        return f"{PREFIX} ({ident}): {message or 'denied by the airlock policy or a person.'}"
    if status == "pending":
        return (
            f"{PREFIX} ({ident}): nobody answered within {max_wait_s:g} s, so the action is "
            "denied (silence is not consent). Ask the user before trying again."
        )
    return f"{PREFIX} ({ident}): the daemon answered with status {status!r}, which is not an allow."
