#!/usr/bin/env python3
"""Leave-one-out figures for a static-embedding model in place of the hashed n-gram model.

Reads the samples written by `cargo run --release -p airlock-shield --features corpora --example
samples` (each with what the rules alone make of it) and the vectors from distill.py; for each
leave-one-out group (the same groups as `airlock eval text --loso`) trains a logistic head per
direction on the rest's training split (every corpus weighing the same within its class, as the
Rust trainer does), chooses the threshold on the rest's calibration split for zero benign texts
flagged by the whole scanner, and reports the whole scanner's verdicts on the group (rules and
flags as built, combined with the head's score by noisy-OR, as the scanner does).

    python3 loso_static.py samples.jsonl minilm-static.npz [--markdown] [--only=PREFIX ...]

The model sees the raw text only (the Rust model also scores normalised and decoded forms), so
this slightly understates the design. Token weights (SIF, a / (a + p)) use token frequencies
over the training-split texts of all sources, label-free.
"""
import json
import sys
import unicodedata

import numpy as np

WINDOW, STRIDE = 128, 64
NOT_TRAINING = {"jbb_gcg"}
PASTED = {"gpteacher_output", "bipia_context"}


class WordPiece:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}
        self.unk = self.vocab["[UNK]"]

    @staticmethod
    def is_cjk(c):
        o = ord(c)
        return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF
                or 0xF900 <= o <= 0xFAFF or 0x2F800 <= o <= 0x2FA1F)

    def basic(self, text):
        text = text.lower()
        text = unicodedata.normalize("NFD", text)
        out, cur = [], []
        for c in text:
            cat = unicodedata.category(c)
            if cat == "Mn":
                continue
            if c.isspace() or cat.startswith("C"):
                if cur:
                    out.append("".join(cur)); cur = []
            elif self.is_cjk(c) or cat.startswith("P") or (c.isascii() and not c.isalnum()):
                if cur:
                    out.append("".join(cur)); cur = []
                out.append(c)
            else:
                cur.append(c)
        if cur:
            out.append("".join(cur))
        return out

    def ids(self, text):
        res = []
        for word in self.basic(text):
            if len(word) > 100:
                res.append(self.unk); continue
            start, pieces = 0, []
            while start < len(word):
                end, found = len(word), None
                while start < end:
                    sub = word[start:end] if start == 0 else "##" + word[start:end]
                    if sub in self.vocab:
                        found = self.vocab[sub]; break
                    end -= 1
                if found is None:
                    pieces = [self.unk]; break
                pieces.append(found); start = end
            res.extend(pieces)
        return res


def windows(ids):
    if len(ids) <= WINDOW:
        return [ids]
    out, s = [], 0
    while True:
        out.append(ids[s : s + WINDOW])
        if s + WINDOW >= len(ids):
            return out
        s = min(s + STRIDE, len(ids) - WINDOW)


def groups(samples):
    g = {}
    for i, s in enumerate(samples):
        g.setdefault(s["source"], []).append(i)
    for i, s in enumerate(samples):
        if s["corpus"].startswith("multilingual/") and s["lang"]:
            g.setdefault("multilingual lang=" + s["lang"], []).append(i)
    return g


def train_set(samples, keep, d):
    chosen = []
    for i, s in enumerate(samples):
        if not keep[i] or s["split"] != "train" or s["label"] == "crisis" or s["corpus"] in NOT_TRAINING:
            continue
        if d == "user":
            ok = s["direction"] == "user" or (s["label"] == "benign" and s["corpus"] in PASTED)
        else:
            ok = s["direction"] == "tool" or s["label"] == "attack"
        if ok:
            chosen.append(i)
    per, cls = {}, {True: 0, False: 0}
    for i in chosen:
        y = samples[i]["label"] == "attack"
        per[(samples[i]["corpus"], y)] = per.get((samples[i]["corpus"], y), 0) + 1
        cls[y] += 1
    ncorp = {y: max(1, sum(1 for k in per if k[1] == y)) for y in (True, False)}
    out = []
    for i in chosen:
        y = samples[i]["label"] == "attack"
        out.append((i, y, cls[y] / ncorp[y] / per[(samples[i]["corpus"], y)]))
    return out


def fit(X, y, w, l2=1e-3, steps=150, lr=0.1):
    # Balanced classes, then per-item weights; Adam on the mean weighted log-loss.
    wp = w * np.where(y, 0.5 / max(1e-9, (w * y).sum()), 0.5 / max(1e-9, (w * ~y).sum()))
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = (X - mu) / sd
    beta, b = np.zeros(X.shape[1], np.float32), 0.0
    m1, m2, mb1, mb2 = np.zeros_like(beta), np.zeros_like(beta), 0.0, 0.0
    yt = y.astype(np.float32)
    for t in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(Z @ beta + b)))
        g = (p - yt) * wp
        gb, gw = g.sum(), Z.T @ g + l2 * beta
        m1 = 0.9 * m1 + 0.1 * gw; m2 = 0.999 * m2 + 0.001 * gw * gw
        mb1 = 0.9 * mb1 + 0.1 * gb; mb2 = 0.999 * mb2 + 0.001 * gb * gb
        beta -= lr * (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-8)
        b -= lr * (mb1 / (1 - 0.9**t)) / (np.sqrt(mb2 / (1 - 0.999**t)) + 1e-8)
    return (beta / sd).astype(np.float32), float(b - (beta / sd) @ mu)


def calibrate(logits, misses):
    always, crit = 0, []
    for z, miss in zip(logits, misses):
        if miss <= 0.5:
            always += 1; continue
        need = 1 - 0.5 / miss
        crit.append(z - np.log(need / (1 - need)))
    crit.sort(reverse=True)
    return crit[0] + 1e-3 if crit else 0.0


def main():
    samples = [json.loads(l) for l in open(sys.argv[1])]
    npz = np.load(sys.argv[2])
    wp = WordPiece(list(npz["words"]))
    V = npz["vectors"].astype(np.float32)
    toks = [wp.ids(s["text"][: 1 << 20]) for s in samples]
    counts = np.zeros(len(V))
    for s, t in zip(samples, toks):
        if s["split"] == "train":
            np.add.at(counts, t, 1)
    p = counts / max(1, counts.sum())
    sif = (1e-3 / (1e-3 + p)).astype(np.float32)
    win_of, feats = [], []
    for t in toks:
        first = len(feats)
        for w in windows(t):
            if w:
                ww = sif[w]
                feats.append((V[w] * ww[:, None]).sum(0) / max(1e-6, ww.sum()))
            else:
                feats.append(np.zeros(V.shape[1], np.float32))
        win_of.append((first, len(feats)))
    F = np.array(feats, np.float32)

    def logit(i, beta, b):
        a, e = win_of[i]
        return float((F[a:e] @ beta + b).max())

    n = len(samples)
    only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]
    for name, members in groups(samples).items():
        if only and not any(name.startswith(o) for o in only):
            continue
        keep = np.ones(n, bool); keep[members] = False
        model = {}
        for d in ("user", "tool"):
            ts = train_set(samples, keep, d)
            idx, ys, ws = [], [], []
            for i, y, w in ts:
                a, e = win_of[i]
                for k in range(a, e):
                    idx.append(k); ys.append(y); ws.append(w)
            beta, b = fit(F[idx], np.array(ys), np.array(ws, np.float32))
            cal = [i for i in range(n) if keep[i] and samples[i]["split"] == "calib" and samples[i]["label"] == "benign"
                   and (samples[i]["direction"] == d or (d == "user" and samples[i]["corpus"] in PASTED))]
            t = calibrate([logit(i, beta, b) for i in cal], [samples[i]["miss"] for i in cal])
            model[d] = (beta, b, t)
        res = {}
        for i in members:
            s = samples[i]
            beta, b, t = model[s["direction"]]
            score = 1 / (1 + np.exp(-(logit(i, beta, b) - t)))
            attack = 1 - s["miss"] * (1 - score) >= 0.5
            crisis = s["crisis"] and not (s["direction"] == "tool" and attack)
            hit = {"attack": attack, "crisis": crisis, "benign": attack or s["crisis"]}[s["label"]]
            corpus = name if name.startswith("multilingual lang=") else s["corpus"]
            k = res.setdefault((corpus, s["label"]), [0, 0])
            k[0] += hit; k[1] += 1
        md = "--markdown" in sys.argv
        for (corpus, label), (k, m) in res.items():
            v = k / m
            metric = "FPR" if label == "benign" else "recall"
            if md:
                print(f"| {name} | {corpus} | {label} | {m} | {metric} | {100 * v:.1f}% |", flush=True)
            else:
                print(f"{name:<26} {corpus:<32} {label:<7} {m:>5} {metric:<6} {100 * v:6.1f}%", flush=True)


if __name__ == "__main__":
    main()
