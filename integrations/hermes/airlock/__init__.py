"""airlock for Hermes Agent: every tool call is decided by the airlock daemon before it runs.

Hermes loads this directory as a plugin (`~/.hermes/plugins/airlock/`, enabled in
`plugins.enabled`) and calls `register(ctx)`, which adds a `pre_tool_call` hook. Hermes calls
the hook with keyword arguments (`tool_name`, `args`, `session_id`, `task_id`, …) before every
tool dispatch; a returned `{"action": "block", "message": …}` vetoes the call, and the message
becomes the tool result the model reads.

Hermes swallows an exception raised by a hook and runs the tool anyway, so the hook never lets
one escape: whatever goes wrong inside it blocks the call. Hermes also acts on the first
directive among several plugins' answers, so the hook puts itself first (`_answer_first`).
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from . import gate

log = logging.getLogger(__name__)


def pre_tool_call(
    tool_name: str = "",
    args: Optional[dict] = None,
    task_id: str = "",
    session_id: str = "",
    **_: Any,
) -> Optional[dict]:
    try:
        name = tool_name if isinstance(tool_name, str) else str(tool_name)
        message = gate.check(
            name,
            args if isinstance(args, dict) else {},
            session_id=session_id if isinstance(session_id, str) else "",
            task_id=task_id if isinstance(task_id, str) else "",
        )
    except Exception as e:  # a bug here must not become an allow
        log.exception("airlock plugin failed on %r", tool_name)
        message = (
            f"{gate.PREFIX}: the airlock plugin failed ({type(e).__name__}: {e}); nothing was run."
        )
    if message is None:
        return None
    return {"action": "block", "message": message}


def register(ctx: Any) -> None:
    ctx.register_hook("pre_tool_call", pre_tool_call)
    _answer_first(ctx)


def _answer_first(ctx: Any) -> None:
    """Puts this hook before the pre_tool_call hooks of plugins loaded earlier.

    Hermes acts on the first "block" or "approve" among the hooks' answers, in registration
    order. An earlier plugin's "approve" goes to Hermes's own prompt, which `--yolo` or an
    earlier "always" answers without a person, and airlock's "block" would never be read.
    Hermes has no public way to order hooks, so this reorders its list; if that list is not
    where 0.19.0 keeps it, the order stays as registered and a warning says so.
    """
    try:
        hooks = ctx._manager._hooks["pre_tool_call"]
        hooks.remove(pre_tool_call)
        hooks.insert(0, pre_tool_call)
    except Exception as e:
        log.warning(
            "airlock: could not put the airlock hook first (%s); a plugin loaded earlier that "
            "answers pre_tool_call with 'approve' would be acted on before airlock",
            e,
        )
