"""The plugin's requests on the wire, and daemons that answer wrongly: a real HTTP server on
loopback plays the daemon, scripted per test. Whatever it does short of a well-formed "allowed",
the call is blocked."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import closed_port

TOKEN = "alk_" + "w" * 43


class Fake:
    """A scripted daemon: `answers` maps (method, path prefix) to (status, body bytes, delay)."""

    def __init__(self):
        self.answers: dict = {}
        self.requests: list = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.requests.append((self.command, self.path, dict(self.headers), body))
                for (method, prefix), (status, payload, delay) in fake.answers.items():
                    if method == self.command and self.path.startswith(prefix):
                        time.sleep(delay)
                        if status is None:  # hang up without answering
                            self.close_connection = True
                            self.connection.close()
                            return
                        try:
                            self.send_response(status)
                            self.send_header("Content-Type", "application/json")
                            self.send_header("Content-Length", str(len(payload)))
                            self.end_headers()
                            self.wfile.write(payload)
                        except (BrokenPipeError, ConnectionResetError):
                            pass  # the plugin gave up first (the slow-daemon test)
                        return
                self.send_error(404)

            do_GET = _answer
            do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def on(self, method, prefix, status, body, delay=0.0):
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.answers[(method, prefix)] = (status, payload, delay)


@pytest.fixture
def fake(monkeypatch):
    f = Fake()
    monkeypatch.setenv("AIRLOCK_URL", f.url)
    monkeypatch.setenv("AIRLOCK_TOKEN", TOKEN)
    monkeypatch.delenv("AIRLOCK_SESSION", raising=False)
    monkeypatch.delenv("AIRLOCK_HERMES_MAX_WAIT", raising=False)
    yield f
    f.server.shutdown()
    f.server.server_close()


def call(hermes, tool="terminal", args=None):
    return hermes.resolve_pre_tool_block(
        tool,
        args if args is not None else {"command": "ls", "workdir": "/srv/app"},
        task_id="task-1",
        session_id="sess-1",
        tool_call_id="call_1",
    )


def test_submit_then_long_poll_on_the_wire(hermes, fake):
    fake.on("POST", "/v1/actions", 200, {"id": "apr-1/x", "status": "pending", "message": "wait"})
    fake.on(
        "GET",
        "/v1/actions/apr-1%2Fx/wait",
        200,
        {"id": "apr-1/x", "status": "allowed", "message": "Approved by t."},
    )
    assert call(hermes) is None
    (m1, p1, h1, b1), (m2, p2, h2, _) = fake.requests
    assert (m1, p1) == ("POST", "/v1/actions")
    assert h1["Authorization"] == f"Bearer {TOKEN}"
    assert h1["Content-Type"] == "application/json"
    assert json.loads(b1) == {
        "kind": "shell",
        "command": "ls",
        "session": "sess-1",
        "cwd": "/srv/app",
    }
    assert m2 == "GET"
    assert p2 == "/v1/actions/apr-1%2Fx/wait?timeout=30"
    assert h2["Authorization"] == f"Bearer {TOKEN}"


def test_proxy_settings_are_not_used(hermes, fake, monkeypatch):
    dead = f"http://127.0.0.1:{closed_port()}"
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(var, dead)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    assert call(hermes) is None


@pytest.mark.parametrize(
    "status, body, expect",
    [
        (200, {"id": "req-1", "status": "maybe"}, "status 'maybe', which is not an allow"),
        (200, {"id": "req-1"}, "status None, which is not an allow"),
        (200, {"id": "req-1", "status": "ALLOWED"}, "which is not an allow"),
        (200, b"<html>allowed</html>", "with something that is not JSON"),
        (200, b'["allowed"]', "answered with a non-object"),
        (200, {"status": "pending"}, "pending without an approval id"),
        (500, {"error": {"code": "INTERNAL", "message": "boom"}}, "INTERNAL (HTTP 500): boom"),
        (
            422,
            {"error": {"code": "INVALID_ACTION", "message": "bad"}},
            "INVALID_ACTION (HTTP 422): bad",
        ),
        (503, b"upstream down", "HTTP_ERROR (HTTP 503)"),
        (None, b"", "talking to the airlock daemon"),
    ],
)
def test_wrong_answers_block(hermes, fake, status, body, expect):
    fake.on("POST", "/v1/actions", status, body)
    message = call(hermes)
    assert message is not None, "an unusable answer let the call through"
    assert message.startswith("BLOCKED by airlock"), message
    assert expect in message, message


def test_a_daemon_too_slow_to_answer_blocks(hermes, plugin, fake, monkeypatch):
    monkeypatch.setattr(plugin.gate.settings, "SUBMIT_TIMEOUT_S", 0.5)
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed"}, delay=2.0)
    message = call(hermes)
    assert message is not None
    assert "did not answer within 0.5 s" in message


def test_tool_arguments_reach_the_daemon_as_json(hermes, fake):
    fake.on(
        "POST",
        "/v1/actions",
        200,
        {"id": "req-9", "status": "denied", "message": "Denied: not declared."},
    )
    args = {"query": "ünïcode", "limit": 5, "nested": {"a": [1, None, True]}}
    message = call(hermes, "web_search", args)
    assert message == "BLOCKED by airlock (req-9): Denied: not declared."
    body = json.loads(fake.requests[0][3])
    assert body == {"kind": "tool", "tool": "web_search", "arguments": args, "session": "sess-1"}
