"""The whole Hermes agent loop: `run_agent.AIAgent` talks to a scripted model on loopback (the
OpenAI chat-completions wire format, streamed as Hermes asks for it), the model calls the
terminal tool, the plugin asks the real daemon, and the next request to the model carries what
Hermes made of the answer: the command's output, or airlock's reason for blocking it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedModel:
    """Answers the n-th chat completion with the n-th scripted assistant message."""

    def __init__(self, script: list):
        self.script = script
        self.requests: list = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # Hermes probes for model metadata; there is none here
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if not self.path.endswith("/chat/completions"):
                    return self.do_GET()
                n = len(model.requests)
                model.requests.append(body)
                message = model.script[min(n, len(model.script) - 1)]
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                if body.get("stream"):
                    self._stream(message, finish)
                else:
                    self._json(
                        {
                            "id": f"c{n}",
                            "object": "chat.completion",
                            "created": 1,
                            "model": body.get("model"),
                            "usage": _USAGE,
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        }
                    )

            def _stream(self, message, finish):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = dict(message)
                if delta.get("tool_calls"):
                    delta["tool_calls"] = [
                        dict(tc, index=i) for i, tc in enumerate(delta["tool_calls"])
                    ]
                for choice in (
                    {"index": 0, "delta": delta, "finish_reason": None},
                    {"index": 0, "delta": {}, "finish_reason": finish},
                ):
                    chunk = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 1,
                        "model": "m",
                        "choices": [choice],
                    }
                    if choice["finish_reason"]:
                        chunk["usage"] = _USAGE
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def _json(self, value):
                raw = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


_USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}


def terminal_call(call_id: str, **args) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps(args)},
    }


def test_the_model_reads_airlocks_answer(hermes, use_daemon, tmp_path):
    (tmp_path / "marker-file.txt").write_text("x")
    victim = tmp_path / "victim"
    victim.mkdir()
    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    terminal_call("call_ls", command="ls", workdir=str(tmp_path)),
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    terminal_call("call_rm", command=f"rm -rf {victim} / ", workdir=str(tmp_path)),
                ],
            },
            {"role": "assistant", "content": "Understood, I will not do that."},
        ]
    )
    try:
        from run_agent import AIAgent

        agent = AIAgent(
            base_url=model.url,
            api_key="test-key",
            model="scripted",
            quiet_mode=True,
            enabled_toolsets=["terminal"],
            skip_context_files=True,
            skip_memory=True,
            max_iterations=5,
            tool_delay=0,
            session_id="hermes-agent-loop",
        )
        reply = agent.chat("list the files, then clean up")
    finally:
        model.close()

    assert reply == "Understood, I will not do that."
    assert len(model.requests) == 3
    tool_results = {
        m["tool_call_id"]: m["content"]
        for m in model.requests[-1]["messages"]
        if m.get("role") == "tool"
    }
    assert "marker-file.txt" in tool_results["call_ls"], tool_results
    blocked = json.loads(tool_results["call_rm"])["error"]
    assert blocked.startswith("BLOCKED by airlock (req-"), blocked
    assert "recursive delete of the file-system root" in blocked
    assert victim.exists(), "a denied command ran"
