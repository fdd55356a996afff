"""The README's policy snippet for Hermes: it loads, its own examples hold, and through the
plugin it keeps an agent from switching airlock off."""

from __future__ import annotations

import os
import subprocess

from conftest import POLICY_SNIPPET, airlock_bin


def test_snippet_examples_hold(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), AIRLOCK_DATA_DIR=str(tmp_path / "data"))
    for args in (
        ["policy", "check", "--policy", str(POLICY_SNIPPET)],
        ["policy", "test", "--policy", str(POLICY_SNIPPET)],
    ):
        run = subprocess.run(
            [str(airlock_bin()), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stdout + run.stderr
    assert " 0 failed" in run.stdout, run.stdout


def test_agent_cannot_switch_the_plugin_off(hermes, use_daemon):
    def ask(command: str):
        return hermes.resolve_pre_tool_block(
            "terminal", {"command": command}, task_id="tamper", session_id="tamper"
        )

    # airlock's built-in rules deny these two already; the snippet's rules back them up
    message = ask("hermes plugins disable airlock")
    assert message is not None and "disabling or removing the airlock plugin" in message
    message = ask("hermes config set plugins.disabled '[airlock]'")
    assert message is not None and "switch off the airlock plugin" in message
    message = ask("""echo '{"url":"http://127.0.0.1:9"}' > ~/.local/share/airlock/serve.json""")
    assert message is not None and "supervise it" in message
    assert ask("hermes plugins list") is None
