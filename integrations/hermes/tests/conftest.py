"""Fixtures: a real `airlock serve` on loopback and a real Hermes Agent with the plugin installed
the way the README says (`hermes plugins install --enable file://…#integrations/hermes/airlock`)
into a temporary HERMES_HOME, then discovered by Hermes's own plugin manager.

The airlock binary comes from AIRLOCK_BIN (default: target/debug/airlock in the repository).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest

REPO = Path(__file__).resolve().parents[3]
PLUGIN_SRC = REPO / "integrations" / "hermes" / "airlock"
POLICY_SNIPPET = REPO / "integrations" / "hermes" / "policy.toml"

# Hermes reads HERMES_HOME when its modules are first used; it must point at a scratch home
# before anything imports them, so a developer's own ~/.hermes is never touched.
_HERMES_HOME = Path(tempfile.mkdtemp(prefix="airlock-hermes-home-"))
os.environ["HERMES_HOME"] = str(_HERMES_HOME)
atexit.register(shutil.rmtree, _HERMES_HOME, ignore_errors=True)
for _var in ("AIRLOCK_URL", "AIRLOCK_TOKEN", "AIRLOCK_SESSION", "AIRLOCK_HERMES_MAX_WAIT"):
    os.environ.pop(_var, None)


def airlock_bin() -> Path:
    path = Path(os.environ.get("AIRLOCK_BIN") or REPO / "target" / "debug" / "airlock")
    if not path.is_absolute():
        path = REPO / path
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"no airlock binary at {path}: run `cargo build -p airlock`, or set AIRLOCK_BIN"
        )
    return path


@dataclass
class Daemon:
    """A running `airlock serve` with its own data and config directories."""

    root: Path
    proc: subprocess.Popen
    url: str
    agent_token: str
    approver_token: str
    env: dict = field(repr=False)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(airlock_bin()), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=check,
        )

    def approvals(self) -> list:
        req = urllib.request.Request(self.url + "/v1/approvals")
        req.add_header("Authorization", f"Bearer {self.approver_token}")
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = json.load(resp)
        return body["approvals"] if isinstance(body, dict) else body

    def answer_when_pending(
        self, session: str, answer: Callable[[dict], None], timeout: float = 30
    ) -> threading.Thread:
        """Starts a person in a thread: waits for the approval of `session`, then answers it
        (`answer` gets the approval as `GET /v1/approvals` lists it)."""

        def person() -> None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                for a in self.approvals():
                    if a.get("session") == session and a.get("status") == "pending":
                        answer(a)
                        return
                time.sleep(0.1)

        thread = threading.Thread(target=person, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_daemon(root: Path, policy: Optional[Path] = None) -> Daemon:
    (root / "data").mkdir(parents=True)
    (root / "config" / "airlock").mkdir(parents=True)
    if policy is not None:
        shutil.copy(policy, root / "config" / "airlock" / "policy.toml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRLOCK_")}
    env.update(AIRLOCK_DATA_DIR=str(root / "data"), XDG_CONFIG_HOME=str(root / "config"))
    log = open(root / "serve.log", "wb")
    proc = subprocess.Popen(
        [str(airlock_bin()), "serve", "--listen", "127.0.0.1:0"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    serve_json = root / "data" / "serve.json"
    token_file = root / "data" / "agent.token"
    deadline = time.monotonic() + 60
    while not (serve_json.exists() and token_file.exists()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(
                "airlock serve did not start:\n" + (root / "serve.log").read_text(errors="replace")
            )
        time.sleep(0.05)
    # serve.json may be seen before it is completely written.
    while True:
        try:
            url = json.loads(serve_json.read_text())["url"].rstrip("/")
            break
        except (ValueError, KeyError):
            time.sleep(0.05)
    daemon = Daemon(root, proc, url, token_file.read_text().strip(), "", env)
    created = daemon.cli("token", "create", "--role", "approver", "--name", "t", "--quiet")
    daemon.approver_token = created.stdout.strip()
    assert daemon.approver_token.startswith("alk_"), created
    return daemon


@pytest.fixture(scope="session")
def daemon(tmp_path_factory) -> Daemon:
    """One daemon for the session, with the README's policy for Hermes's tools as user policy."""
    d = start_daemon(tmp_path_factory.mktemp("airlock"), POLICY_SNIPPET)
    yield d
    d.stop()


@pytest.fixture
def second_daemon(tmp_path_factory) -> Daemon:
    """A daemon of one's own, for tests that stop it."""
    d = start_daemon(tmp_path_factory.mktemp("airlock2"))
    yield d
    d.stop()


@pytest.fixture(scope="session")
def hermes(tmp_path_factory):
    """Hermes's plugin module after installing and discovering the plugin as a user would.

    The install clones a git repository, so the working tree's plugin is committed into a
    scratch repository laid out like this one and installed from there with the README's line.
    """
    repo = tmp_path_factory.mktemp("checkout")
    shutil.copytree(
        PLUGIN_SRC,
        repo / "integrations" / "hermes" / "airlock",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "plugin"], check=True)
    hermes_cli = Path(sys.executable).parent / "hermes"
    install = subprocess.run(
        [
            str(hermes_cli),
            "plugins",
            "install",
            "--enable",
            f"file://{repo}#integrations/hermes/airlock",
        ],
        env={**os.environ, "HERMES_HOME": str(_HERMES_HOME)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert "Plugin airlock enabled" in install.stdout, install.stdout

    from hermes_cli import plugins

    plugins.discover_plugins(force=True)
    return plugins


@pytest.fixture
def use_daemon(daemon, monkeypatch) -> Daemon:
    """The plugin finds `daemon` the default way: serve.json and agent.token in the data dir."""
    for var in ("AIRLOCK_URL", "AIRLOCK_TOKEN", "AIRLOCK_SESSION", "AIRLOCK_HERMES_MAX_WAIT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AIRLOCK_DATA_DIR", str(daemon.data_dir))
    return daemon


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def plugin(hermes):
    """The plugin's package as Hermes loaded it (`hermes_plugins.airlock`)."""
    return hermes.get_plugin_manager()._plugins["airlock"].module
