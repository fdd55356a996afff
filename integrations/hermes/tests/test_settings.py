"""Finding the daemon: the airlock CLI's discovery rules, on real files, through the plugin as
Hermes loaded it."""

from __future__ import annotations

import json
import re
import sys

import pytest


def settings_of(plugin):
    return plugin.gate.settings


def write_serve(directory, url="http://127.0.0.1:7373/", token="alk_secret\n"):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "serve.json").write_text(json.dumps({"url": url, "pid": 1, "node": "n"}))
    if token is not None:
        (directory / "agent.token").write_text(token)


def test_files_in_the_data_dir(plugin, tmp_path):
    s = settings_of(plugin)
    write_serve(tmp_path)
    got = s.load({"AIRLOCK_DATA_DIR": str(tmp_path), "HOME": "/nonexistent"})
    assert got.url == "http://127.0.0.1:7373"
    assert got.token == "alk_secret"
    assert got.max_wait_s == s.MAX_WAIT_S
    assert got.session is None


def test_environment_first(plugin, tmp_path):
    s = settings_of(plugin)
    write_serve(tmp_path)
    env = {
        "AIRLOCK_DATA_DIR": str(tmp_path),
        "AIRLOCK_URL": "https://airlock.example/",
        "AIRLOCK_TOKEN": "alk_env",
        "AIRLOCK_SESSION": "work",
        "AIRLOCK_HERMES_MAX_WAIT": "7.5",
    }
    got = s.load(env)
    assert (got.url, got.token, got.session, got.max_wait_s) == (
        "https://airlock.example",
        "alk_env",
        "work",
        7.5,
    )


@pytest.mark.skipif(sys.platform != "linux", reason="the XDG rule is Linux's")
def test_default_data_dir_follows_xdg(plugin, tmp_path):
    s = settings_of(plugin)
    assert s.data_dir({"HOME": "/home/u"}) == type(tmp_path)("/home/u/.local/share/airlock")
    assert s.data_dir({"HOME": "/home/u", "XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "airlock"
    # A relative XDG_DATA_HOME is ignored, as the `dirs` crate ignores it.
    assert s.data_dir({"HOME": "/home/u", "XDG_DATA_HOME": "rel"}) == type(tmp_path)(
        "/home/u/.local/share/airlock"
    )
    write_serve(tmp_path / "airlock")
    assert s.load({"HOME": "/home/u", "XDG_DATA_HOME": str(tmp_path)}).token == "alk_secret"


@pytest.mark.parametrize(
    "serve_json, token, expect",
    [
        (None, "alk_x", "no airlock daemon found"),
        ("{not json", "alk_x", "does not hold the daemon's URL"),
        ('{"url": 5}', "alk_x", "does not hold the daemon's URL"),
        ('{"url": "ftp://h/"}', "alk_x", "is not an http(s) URL"),
        ('{"url": "http://"}', "alk_x", "is not an http(s) URL"),
        ('{"url": "http://127.0.0.1:1"}', None, "no agent token"),
        ('{"url": "http://127.0.0.1:1"}', "  \n", "is empty"),
    ],
)
def test_what_cannot_be_used_is_an_error(plugin, tmp_path, serve_json, token, expect):
    s = settings_of(plugin)
    if serve_json is not None:
        (tmp_path / "serve.json").write_text(serve_json)
    if token is not None:
        (tmp_path / "agent.token").write_text(token)
    with pytest.raises(s.ConfigError, match=re.escape(expect)):
        s.load({"AIRLOCK_DATA_DIR": str(tmp_path)})


def test_session_names(plugin):
    a = plugin.gate.actions
    assert a.session_of(None, "sess", "task") == "sess"
    assert a.session_of(None, "", "task") == "task"
    assert a.session_of(None, "", "") == "hermes"
    assert a.session_of("mine", "sess", "task") == "mine"
    assert a.session_of(None, "\x00\x1b\n", "task") == "task"
    assert a.session_of(None, "x" * 500, "") == "x" * 128


def test_action_shapes(plugin, tmp_path):
    a = plugin.gate.actions
    assert a.action_for("terminal", {"command": "ls", "workdir": str(tmp_path)}, "s") == {
        "kind": "shell",
        "command": "ls",
        "session": "s",
        "cwd": str(tmp_path),
    }
    assert a.action_for("bash", {"cmd": "ls", "workdir": str(tmp_path)}, "s")["command"] == "ls"
    sub = a.action_for("terminal", {"command": "ls", "workdir": "sub/../sub2"}, "s")
    assert sub["cwd"].endswith("/sub2") and sub["cwd"].startswith("/")
    # A shell tool without a command line is decided as the tool it is.
    assert a.action_for("terminal", {"command": ["ls"]}, "s") == {
        "kind": "tool",
        "tool": "terminal",
        "arguments": {"command": ["ls"]},
        "session": "s",
    }
    assert a.action_for("web_search", {"query": "q", "n": 3}, "s") == {
        "kind": "tool",
        "tool": "web_search",
        "arguments": {"query": "q", "n": 3},
        "session": "s",
    }
