#!/usr/bin/env python3
"""Build datasets/text/multilingual/<lang>.jsonl from the hand-written sources in src/<lang>.txt.

Every text comes from src/; this script only arranges it. Source format, one item per line,
"\\n" inside a line stands for a line break, lines starting with "%%" are comments
(texts may start with "#", as code and markdown do):

    @ <label> <direction> <shape>   following lines are texts with that label, direction, shape
    @ <label> <direction> <shape> <lang>   the same with the language named (mixed.txt)
    @ carriers                      harmless documents (tool output): each is written out as
                                    label benign, direction tool, shape injection_document, and
                                    is used as a carrier for the payloads below
    @ payloads                      instructions aimed at the assistant reading a document

Combination (deterministic): payload i is put into carrier i mod C at position i mod 3
(start, middle, end) and into carrier (i + C//2 + 1) mod C at position (i + 1) mod 3; each result
is label attack, direction tool, shape injection_document. "middle" is the line break nearest
the middle of the carrier (the end, if the carrier is one line).

Usage: python3 build.py            rebuild every src/<name>.txt into <name>.jsonl here, and check
       python3 build.py --check    only check the written .jsonl files
"""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
LABELS = {"attack", "benign", "crisis"}
DIRECTIONS = {"user", "tool"}


def insert(carrier: str, payload: str, pos: int) -> str:
    if pos == 0:
        return payload + "\n\n" + carrier
    lines = carrier.split("\n")
    if pos == 1 and len(lines) >= 2:
        cut = len(lines) // 2
        return "\n".join(lines[:cut] + [payload] + lines[cut:])
    return carrier + "\n\n" + payload


def parse(path: pathlib.Path):
    rows, carriers, payloads = [], [], []
    mode = None
    lang = path.stem if len(path.stem) == 2 else None  # mixed.txt: each header names its lang
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.startswith("%%"):
            continue
        if line.startswith("@ "):
            parts = line[2:].split()
            if parts == ["carriers"]:
                mode = "carriers"
            elif parts == ["payloads"]:
                mode = "payloads"
            elif len(parts) == 3 and parts[0] in LABELS and parts[1] in DIRECTIONS:
                mode = tuple(parts)
            elif len(parts) == 4 and parts[0] in LABELS and parts[1] in DIRECTIONS:
                mode = tuple(parts[:3]) + (parts[3],)  # explicit lang (mixed file)
            else:
                sys.exit(f"{path}:{n}: bad header {line!r}")
            continue
        text = line.replace("\\n", "\n")
        if mode is None:
            sys.exit(f"{path}:{n}: text before any header")
        if mode == "carriers":
            carriers.append(text)
        elif mode == "payloads":
            payloads.append(text)
        else:
            label, direction, shape = mode[:3]
            row_lang = mode[3] if len(mode) == 4 else lang
            if row_lang is None:
                sys.exit(f"{path}:{n}: no language: name it in the header")
            rows.append({"text": text, "label": label, "direction": direction,
                         "lang": row_lang, "shape": shape})
    for c in carriers:
        rows.append({"text": c, "label": "benign", "direction": "tool", "lang": lang,
                     "shape": "injection_document"})
    if payloads and not carriers:
        sys.exit(f"{path}: payloads without carriers")
    if (carriers or payloads) and lang is None:
        sys.exit(f"{path}: carriers and payloads need a one-language file")
    C = len(carriers)
    for i, p in enumerate(payloads):
        for ci, pos in ((i % C, i % 3), ((i + C // 2 + 1) % C, (i + 1) % 3)):
            rows.append({"text": insert(carriers[ci], p, pos), "label": "attack",
                         "direction": "tool", "lang": lang, "shape": "injection_document"})
    return rows


def check(path: pathlib.Path):
    seen = set()
    counts = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        o = json.loads(line)
        assert set(o) <= {"text", "label", "direction", "lang", "shape"}, (path, n, o)
        assert isinstance(o["text"], str) and o["text"].strip(), (path, n)
        assert o["label"] in LABELS and o["direction"] in DIRECTIONS, (path, n, o)
        assert len(o["lang"]) == 2 and o["lang"].isalpha(), (path, n, o)
        assert o["text"] not in seen, (path, n, "duplicate", o["text"][:60])
        seen.add(o["text"])
        k = (o["label"], o.get("shape", ""))
        counts[k] = counts.get(k, 0) + 1
    return counts


def main():
    if "--check" not in sys.argv:
        for src in sorted((HERE / "src").glob("*.txt")):
            rows = parse(src)
            out = HERE / (src.stem + ".jsonl")
            with out.open("w", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
    total = 0
    for out in sorted(HERE.glob("*.jsonl")):
        c = check(out)
        n = sum(c.values())
        total += n
        a = sum(v for (l, _), v in c.items() if l == "attack")
        print(f"{out.name:14} {n:4}  attack {a:4}  benign {n - a:4}  "
              + " ".join(f"{l[0]}:{s}={v}" for (l, s), v in sorted(c.items())))
    print("total", total)


if __name__ == "__main__":
    main()
