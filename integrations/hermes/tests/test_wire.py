"""The plugin's requests on the wire, and daemons that answer wrongly: a real HTTP server on
loopback plays the daemon, scripted per test, proving its answers with a key it wrote into the
data directory as `airlock serve` does. Whatever it does short of a well-formed, proved
"allowed", the call is blocked; a server that cannot prove the key never sees the token."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import closed_port

TOKEN = "alk_" + "w" * 43
DOMAIN = b"airlock.daemon-answer.v1\0"


def prove(key: bytes, nonce: str, status: int, body: bytes) -> str:
    """The daemon's proof, written here from the protocol (not imported from the plugin), so a
    plugin that computed it wrongly would fail against the real daemon and here alike."""
    m = hmac.new(key, DOMAIN + nonce.encode() + b"\0" + str(status).encode() + b"\0" + body,
                 hashlib.sha256)
    return m.hexdigest()


class Fake:
    """A scripted daemon: `answers` maps (method, path prefix) to (status, body bytes, delay).

    It proves its answers with `key` (`proof` = "good"), sends none ("none"), or proves with
    another key ("wrong"); `hello_proof` does the same for `/healthz` alone."""

    def __init__(self, key: bytes):
        self.answers: dict = {}
        self.requests: list = []
        self.key = key
        self.proof = "good"
        self.hello_proof = "good"
        self.connections: set = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            protocol_version = "HTTP/1.1"  # keep-alive, as the real daemon

            def _proof_header(self, status, payload, mode):
                nonce = self.headers.get("X-Airlock-Nonce")
                if nonce is None or mode == "none":
                    return
                key = fake.key if mode == "good" else secrets.token_bytes(32)
                self.send_header("X-Airlock-Proof", prove(key, nonce, status, payload))

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake.connections.add(self.client_address)
                if self.command == "GET" and self.path == "/healthz":
                    fake.requests.append(("HELLO", self.path, dict(self.headers), body))
                    payload = b'{"status":"ok"}'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self._proof_header(200, payload, fake.hello_proof)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
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
                            self._proof_header(status, payload, fake.proof)
                            self.end_headers()
                            self.wfile.write(payload)
                        except (BrokenPipeError, ConnectionResetError):
                            pass  # the plugin gave up first (the slow-daemon test)
                        return
                self.send_error(404)  # unproved: the plugin must treat it as no daemon

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
def fake(monkeypatch, tmp_path):
    key = secrets.token_bytes(32)
    (tmp_path / "daemon.key").write_text(key.hex() + "\n")
    f = Fake(key)
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(tmp_path))
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
    hellos = [r for r in fake.requests if r[0] == "HELLO"]
    assert len(hellos) == 2, "each request is preceded by a proof of who answers"
    assert all("Authorization" not in h for _, _, h, _ in hellos), "the token went to a hello"
    (m1, p1, h1, b1), (m2, p2, h2, _) = [r for r in fake.requests if r[0] != "HELLO"]
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
        (
            500,
            {"error": {"code": "INTERNAL_ERROR", "message": "boom"}},
            "INTERNAL_ERROR (HTTP 500): boom",
        ),
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
    body = json.loads([r for r in fake.requests if r[0] != "HELLO"][0][3])
    assert body == {"kind": "tool", "tool": "web_search", "arguments": args, "session": "sess-1"}


@pytest.mark.parametrize("hello", ["none", "wrong"])
def test_a_stranger_on_the_port_never_sees_the_token(hermes, fake, hello):
    """A program that bound the daemon's port (after the daemon died) answers the hello without
    the key's proof: the call is blocked and the token is never sent."""
    fake.hello_proof = hello
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    message = call(hermes)
    assert message is not None and message.startswith("BLOCKED by airlock"), message
    assert "is not the airlock daemon of this data directory" in message, message
    assert "the agent token was not sent" in message, message
    assert [r[0] for r in fake.requests] == ["HELLO"]
    assert all("Authorization" not in h for _, _, h, _ in fake.requests)


@pytest.mark.parametrize("answer", ["none", "wrong"])
def test_an_unproved_allow_is_not_believed(hermes, fake, answer):
    fake.proof = answer
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    message = call(hermes)
    assert message is not None and message.startswith("BLOCKED by airlock"), message
    assert "is not the airlock daemon of this data directory" in message, message


def test_a_proof_for_another_nonce_is_not_believed(hermes, fake):
    """A replayed proof (the right key, another request's nonce) does not verify."""
    payload = json.dumps({"id": "req-1", "status": "allowed"}).encode()
    stale = prove(fake.key, "00" * 16, 200, payload)
    fake.proof = "none"
    fake.on("POST", "/v1/actions", 200, payload)
    orig = fake.server.RequestHandlerClass._proof_header

    def replay(self, status, body, mode):
        if self.path == "/healthz":
            return orig(self, status, body, mode)
        self.send_header("X-Airlock-Proof", stale)

    fake.server.RequestHandlerClass._proof_header = replay
    try:
        message = call(hermes)
    finally:
        fake.server.RequestHandlerClass._proof_header = orig
    assert message is not None and "does not verify with daemon.key" in message, message


def test_plain_http_without_the_key_is_refused(hermes, fake, monkeypatch, tmp_path):
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(empty))
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    message = call(hermes)
    assert message is not None and message.startswith("BLOCKED by airlock"), message
    assert "no daemon.key in" in message, message
    assert fake.requests == [], "nothing is sent to a daemon that cannot be verified"


def test_a_malformed_key_file_blocks_every_call(hermes, fake, monkeypatch, tmp_path):
    (tmp_path / "daemon.key").write_text("not a key")
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    message = call(hermes)
    assert message is not None and "does not hold a daemon key" in message, message
    assert fake.requests == []


def test_the_request_stays_on_the_connection_that_proved_itself(hermes, fake):
    fake.on("POST", "/v1/actions", 200, {"id": "req-1", "status": "allowed", "message": "ok"})
    assert call(hermes) is None
    assert len(fake.connections) == 1, fake.connections
