"""A small JSON client for the airlock daemon's REST API, on the standard library only (the
plugin must not add dependencies to a Hermes install).

Who answers is checked before anything is believed or the token is sent. Over plain HTTP the
daemon must prove the data directory's ``daemon.key`` (the airlock hook's rule,
``crates/airlock-hook/src/proof.rs``): on a fresh connection the client asks ``/healthz`` with a
random nonce and no token; the answer must carry ``X-Airlock-Proof``, the HMAC-SHA256 under the
key of the nonce, status and body. Only then, on that same connection, is the real request sent
with the token, and its answer must carry a proof for its own nonce too. A process that bound the
daemon's port after the daemon died (or before it started) never sees the token and is never
believed. Over HTTPS the certificate, checked against the system's roots, is the proof.

Every failure is raised as a DaemonError whose text can be shown to the model as it is; the
caller turns any of them into a blocked call.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import secrets
import socket
import ssl
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

# Answers are small JSON objects; anything far larger is not the daemon talking.
MAX_ANSWER_BYTES = 4 * 1024 * 1024

NONCE_HEADER = "X-Airlock-Nonce"
PROOF_HEADER = "X-Airlock-Proof"
HELLO_PATH = "/healthz"
_DOMAIN = b"airlock.daemon-answer.v1\0"


class DaemonError(Exception):
    """The daemon could not be asked, or answered with an error or something unusable."""


class Unreachable(DaemonError):
    pass


class NotTheDaemon(DaemonError):
    """Whatever answers cannot prove it is the daemon of this data directory."""


class ApiError(DaemonError):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.code = code
        self.message = message


def proof_of(key: bytes, nonce: str, status: int, body: bytes) -> str:
    """The daemon's proof for one answer (hex), as ``airlock_hook::proof`` computes it."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(_DOMAIN)
    mac.update(nonce.encode("ascii"))
    mac.update(b"\0")
    mac.update(str(status).encode("ascii"))
    mac.update(b"\0")
    mac.update(body)
    return mac.hexdigest()


class Client:
    def __init__(
        self,
        url: str,
        token: str,
        key: Optional[bytes] = None,
        key_file: Optional[Path] = None,
    ):
        self.url = url
        self.token = token
        self.key = key
        self.key_file = key_file
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._base = parts.path.rstrip("/")

    def post(self, path: str, body: Any, timeout: float) -> dict:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return self._send("POST", path, data, timeout)

    def get(self, path: str, timeout: float) -> dict:
        return self._send("GET", path, None, timeout)

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        # Connections are made directly: an HTTP proxy from the environment has no business
        # seeing the agent token or deciding what reaches the firewall (http.client reads no
        # proxy settings).
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _send(self, method: str, path: str, data: Optional[bytes], timeout: float) -> dict:
        if not self._https and self.key is None:
            where = f" in {self.key_file.parent}" if self.key_file is not None else ""
            raise NotTheDaemon(
                f"no daemon.key{where}, so whatever answers at {self.url} cannot be verified "
                "as the airlock daemon (over plain HTTP it must prove that key); run the daemon "
                "with the same data directory (AIRLOCK_DATA_DIR), or reach it over https://"
            )
        conn = self._connection(timeout)
        try:
            conn.connect()
        except (socket.timeout, TimeoutError):
            conn.close()
            raise Unreachable(
                f"the airlock daemon at {self.url} did not answer within {timeout:g} s"
            ) from None
        except (OSError, ValueError) as e:
            conn.close()
            raise Unreachable(f"cannot reach the airlock daemon at {self.url}: {e}") from None
        try:
            if not self._https:
                self._hello(conn)
                # The request must go over the connection that proved itself: never let
                # http.client open a new one behind our back.
                conn.auto_open = 0
            nonce = secrets.token_hex(16)
            headers = {
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json",
                NONCE_HEADER: nonce,
            }
            if data is not None:
                headers["Content-Type"] = "application/json"
            conn.request(method, self._base + path, body=data, headers=headers)
            status, proof, raw = self._read(conn)
            if not self._https:
                self._check(nonce, status, raw, proof, token_sent=True)
        except DaemonError:
            raise
        except (socket.timeout, TimeoutError):
            raise Unreachable(
                f"the airlock daemon at {self.url} did not answer within {timeout:g} s"
            ) from None
        except ssl.SSLError as e:
            raise Unreachable(f"TLS with the airlock daemon at {self.url} failed: {e}") from None
        except (OSError, ValueError, http.client.HTTPException) as e:
            # Refused, reset mid-answer, the connection closed after the hello, and the like.
            raise Unreachable(f"talking to the airlock daemon at {self.url} failed: {e}") from None
        finally:
            conn.close()
        if status >= 400:
            raise self._api_error(status, raw)
        return self._json(status, raw)

    def _hello(self, conn: http.client.HTTPConnection) -> None:
        """Asks who answers, without the token, and checks the proof."""
        nonce = secrets.token_hex(16)
        conn.request(
            "GET",
            self._base + HELLO_PATH,
            headers={NONCE_HEADER: nonce, "Accept": "application/json"},
        )
        status, proof, raw = self._read(conn)
        self._check(nonce, status, raw, proof)

    def _read(self, conn: http.client.HTTPConnection) -> tuple:
        resp = conn.getresponse()
        proofs = resp.headers.get_all(PROOF_HEADER) or []
        raw = resp.read(MAX_ANSWER_BYTES + 1)
        if len(raw) > MAX_ANSWER_BYTES:
            raise DaemonError(f"the airlock daemon at {self.url} answered with too much data")
        if len(proofs) > 1:
            raise NotTheDaemon(f"whatever answers at {self.url} sent two proofs")
        return resp.status, (proofs[0] if proofs else ""), raw

    def _check(
        self, nonce: str, status: int, raw: bytes, proof: str, token_sent: bool = False
    ) -> None:
        if self.key is not None and hmac.compare_digest(
            proof_of(self.key, nonce, status, raw).encode("ascii"),
            proof.strip().lower().encode("utf-8", "replace"),
        ):
            return
        if not proof:
            why = "carries no proof of daemon.key"
        else:
            why = "carries a proof that does not verify with daemon.key"
        raise NotTheDaemon(
            f"whatever answers at {self.url} is not the airlock daemon of this data directory: "
            f"its answer {why} (a serve.json left by a daemon that stopped, or another program "
            "on the port)" + ("" if token_sent else "; the agent token was not sent")
        )

    def _json(self, status: int, raw: bytes) -> dict:
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
