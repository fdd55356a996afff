"""A small JSON client for the airlock daemon's REST API, on the standard library only (the
plugin must not add dependencies to a Hermes install).

Every failure is raised as a DaemonError whose text can be shown to the model as it is; the
caller turns any of them into a blocked call.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from typing import Any, Optional

# Answers are small JSON objects; anything far larger is not the daemon talking.
MAX_ANSWER_BYTES = 4 * 1024 * 1024

# The daemon is asked directly: an HTTP proxy from the environment has no business seeing the
# agent token or deciding what reaches the firewall.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class DaemonError(Exception):
    """The daemon could not be asked, or answered with an error or something unusable."""


class Unreachable(DaemonError):
    pass


class ApiError(DaemonError):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.code = code
        self.message = message


class Client:
    def __init__(self, url: str, token: str):
        self.url = url
        self.token = token

    def post(self, path: str, body: Any, timeout: float) -> dict:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return self._send("POST", path, data, timeout)

    def get(self, path: str, timeout: float) -> dict:
        return self._send("GET", path, None, timeout)

    def _send(self, method: str, path: str, data: Optional[bytes], timeout: float) -> dict:
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(req, timeout=timeout) as resp:
                return self._json(resp.status, resp.read(MAX_ANSWER_BYTES + 1))
        except urllib.error.HTTPError as e:
            raw = e.read(MAX_ANSWER_BYTES + 1)
            e.close()
            raise self._api_error(e.code, raw) from None
        except urllib.error.URLError as e:
            raise Unreachable(
                f"cannot reach the airlock daemon at {self.url}: {e.reason}"
            ) from None
        except (socket.timeout, TimeoutError):
            raise Unreachable(
                f"the airlock daemon at {self.url} did not answer within {timeout:g} s"
            ) from None
        except (OSError, ValueError, http.client.HTTPException) as e:
            # Connection reset mid-answer, a malformed URL and the like.
            raise Unreachable(f"talking to the airlock daemon at {self.url} failed: {e}") from None

    def _json(self, status: int, raw: bytes) -> dict:
        if len(raw) > MAX_ANSWER_BYTES:
            raise DaemonError(f"the airlock daemon at {self.url} answered with too much data")
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise DaemonError(
                f"the airlock daemon at {self.url} answered HTTP {status} with something that is "
                "not JSON"
            ) from None
        if not isinstance(value, dict):
            raise DaemonError(f"the airlock daemon at {self.url} answered with a non-object")
        return value

    def _api_error(self, status: int, raw: bytes) -> DaemonError:
        try:
            err = self._json(status, raw).get("error")
        except DaemonError:
            err = None
        if not isinstance(err, dict):
            return ApiError(status, "HTTP_ERROR", "the daemon gave no error details")
        code = err.get("code") if isinstance(err.get("code"), str) else "HTTP_ERROR"
        message = err.get("message") if isinstance(err.get("message"), str) else ""
        return ApiError(status, code, message)
