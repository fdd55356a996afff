"""Where the airlock daemon is and how this plugin talks to it, read afresh for every call.

Discovery is the airlock CLI's (``crates/airlock/src/daemon.rs``): ``AIRLOCK_URL`` and
``AIRLOCK_TOKEN`` first, else the ``serve.json`` and ``agent.token`` that ``airlock serve``
writes into the data directory (``AIRLOCK_DATA_DIR``, default the user's data directory +
``/airlock``). Reading on every call means a daemon restarted on another port is found without
restarting Hermes.

Every knob here can only make the plugin stricter: there is no setting that lets a call through
without the daemon's "allowed". A value that cannot be understood is an error, and an error
blocks the call.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional
from urllib.parse import urlsplit

SERVE_FILE = "serve.json"
AGENT_TOKEN_FILE = "agent.token"
# The daemon's secret (64 hex digits, owner-only): a daemon spoken to over plain HTTP must prove
# it on every answer before the token is sent or an answer believed (`client.py`).
DAEMON_KEY_FILE = "daemon.key"

# The longest the plugin waits for a person, in all. The built-in tiers give people 10 to 60 s;
# a daemon that has not answered well after that is treated as silence, and silence denies.
MAX_WAIT_S = 120.0
# One long-poll asks the daemon for at most this long (the daemon caps it at 120 s).
POLL_S = 30
# Submitting is answered at once by the daemon (the person's part happens during the wait).
SUBMIT_TIMEOUT_S = 15.0

# Hermes tools whose `command` (or `cmd`) argument is a shell command line: these become shell
# actions, which airlock analyses command by command. `terminal` is Hermes's own; the others
# are the names other agents and MCP servers commonly give a shell tool.
SHELL_TOOLS = frozenset(
    {"terminal", "bash", "shell", "run_shell_command", "execute_command", "exec"}
)


class ConfigError(Exception):
    """The plugin cannot tell which daemon to ask, or a setting is not understood."""


@dataclass(frozen=True)
class Settings:
    url: str
    token: str
    max_wait_s: float
    session: Optional[str]
    found_in: str
    # daemon.key from the data directory, when it is there.
    key: Optional[bytes] = None
    key_file: Optional[Path] = None


def default_data_dir(env: Mapping[str, str]) -> Path:
    """The airlock data directory when AIRLOCK_DATA_DIR is unset (the `dirs` crate's rule)."""
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "airlock"
    if os.name == "nt":
        appdata = env.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "airlock"
    xdg = env.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"
    return base / "airlock"


def data_dir(env: Mapping[str, str]) -> Path:
    explicit = env.get("AIRLOCK_DATA_DIR", "")
    return Path(explicit) if explicit else default_data_dir(env)


def load(env: Optional[Mapping[str, str]] = None) -> Settings:
    """The daemon to ask and the limits to apply; ConfigError when that cannot be known."""
    env = os.environ if env is None else env
    directory = data_dir(env)
    url = env.get("AIRLOCK_URL", "")
    found_in = "AIRLOCK_URL"
    if not url:
        url = _url_from_serve_file(directory / SERVE_FILE)
        found_in = str(directory / SERVE_FILE)
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the airlock URL {url!r} (from {found_in}) is not an http(s) URL")
    token = env.get("AIRLOCK_TOKEN", "").strip()
    if not token:
        token = _read_token(directory / AGENT_TOKEN_FILE)
    return Settings(
        url=url,
        token=token,
        max_wait_s=_max_wait(env.get("AIRLOCK_HERMES_MAX_WAIT", "")),
        session=env.get("AIRLOCK_SESSION") or None,
        found_in=found_in,
        key=_read_key(directory / DAEMON_KEY_FILE),
        key_file=directory / DAEMON_KEY_FILE,
    )


def _url_from_serve_file(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"no airlock daemon found: {path} does not exist. Start one with `airlock serve`, "
            "or set AIRLOCK_URL and AIRLOCK_TOKEN"
        ) from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    try:
        url = json.loads(text)["url"]
    except (ValueError, KeyError, TypeError):
        raise ConfigError(f"{path} does not hold the daemon's URL") from None
    if not isinstance(url, str):
        raise ConfigError(f"{path} does not hold the daemon's URL")
    return url


def _read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ConfigError(
            f"no agent token: set AIRLOCK_TOKEN (create one with `airlock token create --role "
            f"agent --name hermes`), or run `airlock serve`, which writes {path}"
        ) from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    if not token:
        raise ConfigError(f"{path} is empty")
    return token


def _read_key(path: Path) -> Optional[bytes]:
    """daemon.key's 32 bytes; None when there is no such file (the client then refuses to
    believe a daemon over plain HTTP); an error when the file is there but unusable."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from None
    if len(text) != 64:
        raise ConfigError(f"{path} does not hold a daemon key (64 hex digits)")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ConfigError(f"{path} does not hold a daemon key (64 hex digits)") from None


def _max_wait(raw: str) -> float:
    """AIRLOCK_HERMES_MAX_WAIT in seconds: it may shorten the wait for a person, not lengthen it."""
    if not raw:
        return MAX_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"AIRLOCK_HERMES_MAX_WAIT={raw!r} is not a number of seconds") from None
    if not (value > 0) or value > MAX_WAIT_S:
        raise ConfigError(
            f"AIRLOCK_HERMES_MAX_WAIT={raw!r} is outside 0 < s <= {MAX_WAIT_S:g} (it can only "
            "shorten the wait)"
        )
    return value
