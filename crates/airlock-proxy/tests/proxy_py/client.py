"""The official OpenAI Python SDK as a client of airlock's proxy.

Run by the Rust test `proxy_py` (never on its own): `client.py MODE SPEC_JSON`, with the proxy's
base URL in AIRLOCK_PROXY_URL and the agent token in AIRLOCK_AGENT_TOKEN. It prints one JSON
object describing what the SDK saw, for the Rust side to check.

Modes: `whole` (non-streamed, raw bytes and the SDK's parsed view), `stream` (chunk by chunk
iteration), `helper` (the SDK's stream helper, which assembles and validates the stream),
`models`.
"""

import json
import sys

import openai


def main() -> None:
    mode, spec = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(
        base_url=__import__("os").environ["AIRLOCK_PROXY_URL"],
        api_key=__import__("os").environ["AIRLOCK_AGENT_TOKEN"],
        default_headers={"x-airlock-session": "py-session"},
        max_retries=0,
        timeout=120,
    )
    messages = [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": spec},
    ]
    tools = [
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},
    ]
    out = {"sdk": openai.__version__}
    if mode == "whole":
        raw = client.chat.completions.with_raw_response.create(
            model="test-model", messages=messages, tools=tools,
            extra_body={"x_client_field": {"kept": True}},
        )
        c = raw.parse()
        out["raw"] = raw.http_response.text
        m = c.choices[0].message
        out["content"] = m.content
        out["finish_reason"] = c.choices[0].finish_reason
        out["tool_calls"] = [
            [t.id, t.function.name, t.function.arguments] for t in (m.tool_calls or [])
        ]
        out["x_vendor"] = (c.model_extra or {}).get("x_vendor")
    elif mode == "stream":
        text, calls, finish, order = "", {}, None, []
        for chunk in client.chat.completions.create(
            model="test-model", messages=messages, tools=tools, stream=True,
        ):
            for ch in chunk.choices:
                d = ch.delta
                if d.content:
                    text += d.content
                    order.append("text")
                for t in d.tool_calls or []:
                    slot = calls.setdefault(t.index, ["", "", ""])
                    if t.id:
                        slot[0] = t.id
                    if t.function and t.function.name:
                        slot[1] += t.function.name
                    if t.function and t.function.arguments:
                        slot[2] += t.function.arguments
                    order.append("tool")
                if ch.finish_reason:
                    finish = ch.finish_reason
                    order.append("finish")
        out.update(content=text, finish_reason=finish, order=order,
                   tool_calls=[calls[i] for i in sorted(calls)])
    elif mode == "helper":
        with client.chat.completions.stream(
            model="test-model", messages=messages, tools=tools,
        ) as s:
            for _ in s:
                pass
            c = s.get_final_completion()
        m = c.choices[0].message
        out.update(
            content=m.content,
            finish_reason=c.choices[0].finish_reason,
            tool_calls=[[t.id, t.function.name, t.function.arguments] for t in (m.tool_calls or [])],
        )
    elif mode == "models":
        out["models"] = [m.id for m in client.models.list()]
    elif mode == "error":
        try:
            client.chat.completions.create(model="test-model", messages=messages)
            out["error"] = None
        except openai.APIStatusError as e:
            out["status"] = e.status_code
            out["error"] = e.body
    print(json.dumps(out))


if __name__ == "__main__":
    main()
