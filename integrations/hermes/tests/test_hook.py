"""The plugin inside real Hermes Agent, deciding through a real `airlock serve`.

Calls go through Hermes's own entry points: `resolve_pre_tool_block` (what every tool-dispatch
site of Hermes calls) and `model_tools.handle_function_call` (Hermes's dispatcher, which then
really runs the terminal tool when the call is allowed).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import uuid

from conftest import closed_port


def session() -> str:
    return f"hermes-test-{uuid.uuid4().hex[:12]}"


def block(hermes, tool: str, args: dict, sid: str):
    return hermes.resolve_pre_tool_block(tool, args, task_id=sid, session_id=sid)


def test_installed_plugin_is_loaded_with_its_hook(hermes):
    loaded = hermes.get_plugin_manager()._plugins["airlock"]
    assert loaded.enabled, loaded.error
    assert loaded.error is None
    assert loaded.manifest.source == "user"
    assert loaded.hooks_registered == ["pre_tool_call", "pre_llm_call", "transform_tool_result"]
    assert hermes.has_hook("pre_tool_call")


def test_allowed_command_runs(hermes, use_daemon, tmp_path):
    (tmp_path / "marker-file.txt").write_text("x")
    sid = session()
    assert block(hermes, "terminal", {"command": "ls", "workdir": str(tmp_path)}, sid) is None

    import model_tools

    out = model_tools.handle_function_call(
        "terminal", {"command": "ls", "workdir": str(tmp_path)}, task_id=sid, session_id=sid
    )
    assert "marker-file.txt" in out, out
    assert "BLOCKED" not in out


def test_denied_command_is_blocked_with_the_reason_and_never_runs(hermes, use_daemon, tmp_path):
    sid = session()
    message = block(hermes, "terminal", {"command": "rm -rf /"}, sid)
    assert message is not None
    assert message.startswith("BLOCKED by airlock (req-")
    assert "recursive delete of the file-system root" in message

    import model_tools

    marker = tmp_path / "ran"
    out = model_tools.handle_function_call(
        "terminal",
        {"command": f"touch {marker}; rm -rf /", "workdir": str(tmp_path)},
        task_id=sid,
        session_id=sid,
    )
    assert json.loads(out)["error"].startswith("BLOCKED by airlock"), out
    assert not marker.exists(), "a denied command ran"


def test_ask_waits_and_is_released_by_approve(hermes, use_daemon, tmp_path):
    sid = session()
    d = use_daemon
    person = d.answer_when_pending(
        sid, lambda a: d.cli("approve", a["id"], "--token", d.approver_token)
    )
    started = time.monotonic()
    import model_tools

    # Run in an empty directory: git then fails with "not a git repository", which shows the
    # released command really ran, and harmlessly.
    out = model_tools.handle_function_call(
        "terminal",
        {"command": "git push --force origin main", "workdir": str(tmp_path)},
        task_id=sid,
        session_id=sid,
    )
    person.join(timeout=5)
    assert "BLOCKED" not in out, out
    assert "not a git repository" in out, out
    assert time.monotonic() - started < 30


def test_ask_blocked_by_deny_with_the_persons_reason(hermes, use_daemon):
    sid = session()
    d = use_daemon
    person = d.answer_when_pending(
        sid,
        lambda a: d.cli(
            "deny", a["id"], "--reason", "not on main, push a branch", "--token", d.approver_token
        ),
    )
    message = block(hermes, "terminal", {"command": "git push --force origin main"}, sid)
    person.join(timeout=5)
    assert message is not None
    assert message.startswith("BLOCKED by airlock (apr-")
    assert "not on main, push a branch" in message


def test_silence_is_not_consent(hermes, use_daemon, monkeypatch):
    monkeypatch.setenv("AIRLOCK_HERMES_MAX_WAIT", "2")
    sid = session()
    started = time.monotonic()
    message = block(hermes, "terminal", {"command": "git push --force origin main"}, sid)
    took = time.monotonic() - started
    assert message is not None
    assert "silence is not consent" in message
    assert "within 2 s" in message
    assert 2.0 <= took < 10, took
    pending = [a for a in use_daemon.approvals() if a.get("session") == sid]
    assert len(pending) == 1, "the approval was submitted and left for the daemon to expire"


def test_unreachable_daemon_blocks(hermes, monkeypatch, tmp_path):
    (tmp_path / "daemon.key").write_text("ab" * 32)
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AIRLOCK_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("AIRLOCK_TOKEN", "alk_" + "a" * 43)
    message = block(hermes, "terminal", {"command": "ls"}, session())
    assert message is not None
    assert "cannot reach the airlock daemon" in message
    assert "fail closed" in message


def test_no_daemon_found_blocks(hermes, monkeypatch, tmp_path):
    monkeypatch.delenv("AIRLOCK_URL", raising=False)
    monkeypatch.delenv("AIRLOCK_TOKEN", raising=False)
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(tmp_path))
    message = block(hermes, "read_file", {"path": "/etc/hostname"}, session())
    assert message is not None
    assert "no airlock daemon found" in message
    assert str(tmp_path / "serve.json") in message


def test_daemon_stopped_while_waiting_blocks(hermes, second_daemon, monkeypatch):
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(second_daemon.data_dir))
    sid = session()
    stopper = second_daemon.answer_when_pending(sid, lambda _a: second_daemon.stop())
    message = block(hermes, "terminal", {"command": "git push --force origin main"}, sid)
    stopper.join(timeout=5)
    assert message is not None
    assert message.startswith("BLOCKED by airlock"), message
    assert "fail closed" in message


def test_wrong_token_blocks_with_the_daemons_code(hermes, use_daemon, monkeypatch):
    monkeypatch.setenv("AIRLOCK_TOKEN", "alk_" + "b" * 43)
    message = block(hermes, "terminal", {"command": "ls"}, session())
    assert message is not None
    assert "the daemon refused the request" in message
    assert "HTTP 401" in message


def test_environment_wins_over_the_data_dir(hermes, daemon, monkeypatch, tmp_path):
    # Only the daemon's key there (plain HTTP needs its proof): no serve.json, no agent.token.
    shutil.copy(daemon.data_dir / "daemon.key", tmp_path / "daemon.key")
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AIRLOCK_URL", daemon.url + "/")
    monkeypatch.setenv("AIRLOCK_TOKEN", daemon.agent_token)
    assert block(hermes, "terminal", {"command": "ls"}, session()) is None


def test_a_daemon_of_another_data_dir_is_not_believed(hermes, daemon, second_daemon, monkeypatch):
    """serve.json pointing at a daemon that holds another key (a stale file after a restart
    elsewhere, or another airlock on the port) is refused before the token is sent."""
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(daemon.data_dir))
    monkeypatch.setenv("AIRLOCK_URL", second_daemon.url)
    monkeypatch.delenv("AIRLOCK_TOKEN", raising=False)
    message = block(hermes, "terminal", {"command": "ls"}, session())
    assert message is not None and message.startswith("BLOCKED by airlock"), message
    assert "is not the airlock daemon of this data directory" in message, message


def test_settings_can_only_be_stricter(hermes, use_daemon, monkeypatch):
    for bad in ("121", "1e9", "inf", "nan", "0", "-5", "soon"):
        monkeypatch.setenv("AIRLOCK_HERMES_MAX_WAIT", bad)
        message = block(hermes, "terminal", {"command": "ls"}, session())
        assert message is not None, bad
        assert "AIRLOCK_HERMES_MAX_WAIT" in message, message
    monkeypatch.setenv("AIRLOCK_HERMES_MAX_WAIT", "5")
    assert block(hermes, "terminal", {"command": "ls"}, session()) is None


def test_tools_follow_the_policy(hermes, use_daemon):
    sid = session()
    # Declared by the README's policy snippet (user layer) or by airlock's built-in policy.
    assert block(hermes, "search_files", {"pattern": "TODO", "path": "."}, sid) is None
    assert block(hermes, "read_file", {"path": "README.md"}, sid) is None
    # Not declared anywhere: default deny, with the policy's explanation.
    message = block(hermes, "mcp_github_delete_repo", {"repo": "x"}, sid)
    assert message is not None
    assert "is not declared in the airlock policy" in message


def test_file_writes_need_a_person(hermes, use_daemon, tmp_path):
    sid = session()
    d = use_daemon
    seen = []

    def approve(a: dict) -> None:
        seen.append(a)
        d.cli("approve", a["id"], "--token", d.approver_token)

    person = d.answer_when_pending(sid, approve)
    target = tmp_path / "notes.txt"
    import model_tools

    out = model_tools.handle_function_call(
        "write_file", {"path": str(target), "content": "hello"}, task_id=sid, session_id=sid
    )
    person.join(timeout=5)
    assert "BLOCKED" not in out, out
    assert target.read_text() == "hello"
    assert len(seen) == 1
    assert seen[0]["action"]["kind"] == "tool"
    assert seen[0]["action"]["tool"] == "write_file"
    assert seen[0]["action"]["arguments"] == {"path": str(target), "content": "hello"}


def test_session_falls_back_and_is_sanitised(hermes, use_daemon, monkeypatch):
    sid = session()
    d = use_daemon
    # No Hermes session id: the task id names the session.
    person = d.answer_when_pending(
        sid, lambda a: d.cli("deny", a["id"], "--reason", "no", "--token", d.approver_token)
    )
    message = hermes.resolve_pre_tool_block(
        "terminal", {"command": "git push --force origin main"}, task_id=sid, session_id=""
    )
    person.join(timeout=5)
    assert message is not None and "Denied by t: no" in message
    # AIRLOCK_SESSION wins; control characters are dropped and the length capped.
    monkeypatch.setenv("AIRLOCK_SESSION", "\x07" + "s" * 300)
    assert block(hermes, "terminal", {"command": "ls"}, "ignored") is None


def test_hook_called_as_hermes_calls_it_returns_the_block_directive(hermes, monkeypatch):
    monkeypatch.setenv("AIRLOCK_URL", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("AIRLOCK_TOKEN", "alk_" + "a" * 43)
    results = hermes.invoke_hook(
        "pre_tool_call",
        tool_name="terminal",
        args={"command": "ls"},
        task_id="t",
        session_id="s",
        tool_call_id="call_1",
        turn_id="turn_1",
        api_request_id="req_1",
        middleware_trace=[],
    )
    assert len(results) == 1
    assert results[0]["action"] == "block"
    assert results[0]["message"].startswith("BLOCKED by airlock")


def test_concurrent_calls_get_their_own_answers(hermes, use_daemon):
    # Hermes runs independent tool calls of one model turn in parallel threads.
    d = use_daemon
    yes, no = session(), session()
    people = [
        d.answer_when_pending(
            yes, lambda a: d.cli("approve", a["id"], "--token", d.approver_token)
        ),
        d.answer_when_pending(
            no,
            lambda a: d.cli(
                "deny", a["id"], "--reason", "not this one", "--token", d.approver_token
            ),
        ),
    ]
    results: dict = {}

    def run(sid: str) -> None:
        results[sid] = block(hermes, "terminal", {"command": "git push --force origin main"}, sid)

    threads = [threading.Thread(target=run, args=(sid,)) for sid in (yes, no)]
    for t in threads:
        t.start()
    for t in threads + people:
        t.join(timeout=30)
    assert results[yes] is None
    assert results[no] is not None and "not this one" in results[no]
