#!/usr/bin/env python3
"""Build injection_documents.jsonl from the hand-written parts in injection_parts/.

Every document, payload, benign note and look-alike was written by hand; this script only
combines them. For each document it writes:
  - the document clean (benign),
  - the document with a benign note for humans inserted (benign), at start, middle and end,
  - the document with an injection payload inserted (attack), at start, middle and end,
and then the stand-alone look-alike documents (benign). Deterministic: same output every run.

    python3 datasets/text/attacks/build_injection_documents.py
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "injection_parts"))

from docs1 import DOCS  # noqa: E402
import docs2, docs3  # noqa: E402,F401  (they append to DOCS)
from payloads import PAYLOADS  # noqa: E402
from notes import NOTES  # noqa: E402
from lookalikes import LOOKALIKES  # noqa: E402

PAYLOADS_PER_DOC = 5
NOTES_PER_DOC = 4
HIDDEN = ("display:none", "font-size", "hidden", "white text", "aria-hidden", "alt=")


def wrap(fmt, text):
    if fmt.startswith("LINEPREFIX:"):
        prefix = fmt[len("LINEPREFIX:"):]
        return "\n".join(prefix + line for line in text.split("\n"))
    one = " ".join(line.strip() for line in text.split("\n") if line.strip())
    return fmt.format(p=text, p1=one, pj=json.dumps(one, ensure_ascii=False),
                      pc=one.replace('"', '""'))


def insert(d, piece, where):
    lo, hi = d["lo"], d["hi"]
    at = {"start": lo, "middle": (lo + hi + 1) // 2, "end": hi}[where]
    segs = d["segs"][:at] + [piece] + d["segs"][at:]
    return d["sep"].join(segs)


def row(text, label, shape):
    return {"text": text, "label": label, "direction": "tool", "lang": "en", "shape": shape}


def main():
    rng = random.Random(28)
    payload_order = PAYLOADS[:]
    rng.shuffle(payload_order)
    note_order = NOTES[:]
    rng.shuffle(note_order)
    positions = ["start", "middle", "end"]
    rows, pi, ni = [], 0, 0
    for k, d in enumerate(DOCS):
        rows.append(row(d["sep"].join(d["segs"]), "benign", d["shape"]))
        note_wraps = [w for w in d["wraps"] if not any(h in w for h in HIDDEN)] or ["{p}"]
        for j in range(NOTES_PER_DOC):
            note = note_order[ni % len(note_order)]
            ni += 1
            fmt = note_wraps[j % len(note_wraps)]
            rows.append(row(insert(d, wrap(fmt, note), positions[(k + j) % 3]), "benign", d["shape"]))
        for j in range(PAYLOADS_PER_DOC):
            payload = payload_order[pi % len(payload_order)]
            pi += 1
            fmt = d["wraps"][j % len(d["wraps"])]
            rows.append(row(insert(d, wrap(fmt, payload), positions[(k + j + 1) % 3]), "attack", d["shape"]))
    for shape, text in LOOKALIKES:
        rows.append(row(text, "benign", shape))
    seen, out = set(), []
    for r in rows:
        if r["text"] not in seen:
            seen.add(r["text"])
            out.append(r)
    with open(os.path.join(HERE, "injection_documents.jsonl"), "w") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(len(out), "lines")


if __name__ == "__main__":
    main()
