"""The plugin against the daemon's wire documents (docs/wire/*.schema.json, which a Rust test
keeps equal to the server's types): what it sends is a valid action request, and it allows
exactly the answers the schema calls allowed, waits on pending and blocks everything else."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO / "docs" / "wire"


def schema(name: str) -> dict:
    return json.loads((WIRE / name).read_text())


TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def violations(value, s: dict, where: str = "$") -> list:
    """The small part of JSON Schema these documents use: type, enum, required, properties,
    additionalProperties, items, minLength, maxLength, minimum, maximum."""
    out = []
    if "enum" in s and value not in s["enum"]:
        out.append(f"{where}: {value!r} not in {s['enum']}")
    t = s.get("type")
    if t and not (isinstance(value, TYPES[t]) and not (t == "integer" and isinstance(value, bool))):
        return out + [f"{where}: {value!r} is not {t}"]
    if isinstance(value, str):
        if len(value) < s.get("minLength", 0) or len(value) > s.get("maxLength", 1 << 30):
            out.append(f"{where}: length {len(value)} out of bounds")
    if isinstance(value, int) and not isinstance(value, bool):
        if value < s.get("minimum", value) or value > s.get("maximum", value):
            out.append(f"{where}: {value} out of bounds")
    if isinstance(value, dict):
        for k in s.get("required", []):
            if k not in value:
                out.append(f"{where}: missing {k}")
        props = s.get("properties", {})
        for k, v in value.items():
            if k in props:
                out += violations(v, props[k], f"{where}.{k}")
            elif s.get("additionalProperties") is False:
                out.append(f"{where}: unknown field {k}")
    if isinstance(value, list) and "items" in s:
        for i, v in enumerate(value):
            out += violations(v, s["items"], f"{where}[{i}]")
    return out


def test_the_checker_catches_what_it_must():
    s = schema("action-request.schema.json")
    assert violations({"kind": "shell", "command": "ls", "session": "s"}, s) == []
    assert violations({"kind": "bogus", "session": "s"}, s)
    assert violations({"kind": "shell", "session": "s", "shell": "ls"}, s)
    assert violations({"kind": "shell", "command": "ls"}, s)


def test_what_the_plugin_sends_is_a_valid_action_request(plugin, tmp_path):
    actions, settings = plugin.gate.actions, plugin.gate.settings
    s = schema("action-request.schema.json")
    sent = [
        actions.action_for(
            sorted(settings.SHELL_TOOLS)[0], {"command": "ls -la", "workdir": str(tmp_path)}, "s1"
        ),
        actions.action_for(
            "read_file", {"path": "/etc/hosts", "n": 3, "deep": {"x": [1, None]}}, "s1"
        ),
    ]
    assert {a["kind"] for a in sent} == {"shell", "tool"}
    for a in sent:
        assert violations(a, s) == [], a


def answer(status: str) -> dict:
    decision = {"allowed": "allow", "denied": "deny", "pending": "ask"}[status]
    return {
        "id": "apr-1",
        "status": status,
        "decision": decision,
        "tier": 2,
        "reasons": [
            {
                "rule_id": "r",
                "code": "APPROVAL_DENIED",
                "decision": decision,
                "tier": 2,
                "severity": "high",
                "message": "m",
            }
        ],
        "message": "why",
    }


def test_only_the_allowed_status_allows(plugin):
    s = schema("action-answer.schema.json")
    statuses = s["properties"]["status"]["enum"]
    assert set(statuses) == {"allowed", "denied", "pending"}
    for status in statuses:
        out = answer(status)
        assert violations(out, s) == [], out
        verdict = plugin.gate._verdict(out, 5)
        if status == "allowed":
            assert verdict is None
        else:
            assert isinstance(verdict, str) and verdict, status
    assert "silence is not consent" in plugin.gate._verdict(answer("pending"), 5)
    # a status outside the document never allows
    assert plugin.gate._verdict(dict(answer("allowed"), status="approved"), 5) is not None
