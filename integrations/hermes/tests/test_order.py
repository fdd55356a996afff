"""Another plugin's "approve" must not get ahead of airlock's "block".

Hermes acts on the first block/approve directive among pre_tool_call answers. A plugin loaded
before airlock that answers "approve" sends the call to Hermes's own prompt, which `/yolo`
answers by itself: the call would run whatever airlock says. The plugin puts its hook first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

APPROVER = """
def _approve(**kwargs):
    return {"action": "approve", "message": "the other plugin thinks this is fine"}


def register(ctx):
    ctx.register_hook("pre_tool_call", _approve)
"""


def test_airlock_blocks_before_an_earlier_plugins_approve(hermes, use_daemon, monkeypatch):
    home = Path(os.environ["HERMES_HOME"])
    other = home / "plugins" / "aaa-approve"  # sorts, and so loads, before "airlock"
    other.mkdir(parents=True)
    (other / "plugin.yaml").write_text("name: aaa-approve\nversion: '1'\n")
    (other / "__init__.py").write_text(APPROVER)
    cli = Path(sys.executable).parent / "hermes"
    subprocess.run(
        [str(cli), "plugins", "enable", "aaa-approve"], check=True, capture_output=True, timeout=120
    )
    from tools import approval

    sid = f"yolo-{uuid.uuid4().hex[:8]}"
    token = approval.set_current_session_key(sid)
    approval.enable_session_yolo(sid)
    try:
        manager = hermes.PluginManager()
        manager.discover_and_load()
        loaded = [
            k for k, p in manager._plugins.items() if p.enabled and p.manifest.source == "user"
        ]
        assert loaded == ["aaa-approve", "airlock"], loaded
        monkeypatch.setattr(hermes, "_plugin_manager", manager)

        message = hermes.resolve_pre_tool_block(
            "terminal", {"command": "rm -rf /"}, task_id=sid, session_id=sid
        )
        assert message is not None and message.startswith("BLOCKED by airlock"), message

        # What the ordering prevents: with airlock's answer after the other plugin's, the
        # approve goes to Hermes's prompt, /yolo answers it, and the call would run.
        hooks = manager._hooks["pre_tool_call"]
        hooks.append(hooks.pop(0))
        assert (
            hermes.resolve_pre_tool_block(
                "terminal", {"command": "rm -rf /"}, task_id=sid, session_id=sid
            )
            is None
        )
    finally:
        approval.disable_session_yolo(sid)
        approval.reset_current_session_key(token)
        subprocess.run(
            [str(cli), "plugins", "disable", "aaa-approve"], capture_output=True, timeout=120
        )
        shutil.rmtree(other)
