#!/usr/bin/env python3
"""Build injection_documents.jsonl from the hand-written parts in injection_parts/.

Every document, payload, benign note and look-alike was written by hand; this script only
combines them. For each document it writes:
  - the document clean (benign),
  - the document with a benign note for humans inserted (benign): two general notes and two
    written for that kind of document, at start, middle and end in turn,
  - the document with an injection payload inserted (attack): four general payloads and two
    written for that kind of document, at start, middle and end in turn,
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
import docs2, docs3, docs4, docs5, docs6  # noqa: E402,F401  (they append to DOCS)
from payloads import PAYLOADS, PAYLOADS_BY_SHAPE  # noqa: E402
from notes import NOTES, NOTES_BY_SHAPE  # noqa: E402
from lookalikes import LOOKALIKES  # noqa: E402

PAYLOADS_PER_DOC = 4        # general payloads per document
SHAPE_PAYLOADS_PER_DOC = 2  # payloads written for that document kind
NOTES_PER_DOC = 2           # general notes for humans per document
SHAPE_NOTES_PER_DOC = 2     # notes written for that document kind
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
    spi = {k: 0 for k in PAYLOADS_BY_SHAPE}
    sni = {k: 0 for k in NOTES_BY_SHAPE}
    for k, d in enumerate(DOCS):
        shape = d["shape"]
        rows.append(row(d["sep"].join(d["segs"]), "benign", shape))
        note_wraps = [w for w in d["wraps"] if not any(h in w for h in HIDDEN)] or ["{p}"]
        notes = []
        for _ in range(NOTES_PER_DOC):
            notes.append(note_order[ni % len(note_order)])
            ni += 1
        own = NOTES_BY_SHAPE.get(shape, [])
        for _ in range(SHAPE_NOTES_PER_DOC if own else 0):
            notes.append(own[sni[shape] % len(own)])
            sni[shape] += 1
        for j, note in enumerate(notes):
            fmt = note_wraps[j % len(note_wraps)]
            rows.append(row(insert(d, wrap(fmt, note), positions[(k + j) % 3]), "benign", shape))
        payloads = []
        for _ in range(PAYLOADS_PER_DOC):
            payloads.append(payload_order[pi % len(payload_order)])
            pi += 1
        own = PAYLOADS_BY_SHAPE.get(shape, [])
        for _ in range(SHAPE_PAYLOADS_PER_DOC if own else 0):
            payloads.append(own[spi[shape] % len(own)])
            spi[shape] += 1
        for j, payload in enumerate(payloads):
            fmt = d["wraps"][j % len(d["wraps"])]
            rows.append(row(insert(d, wrap(fmt, payload), positions[(k + j + 1) % 3]), "attack", shape))
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
