#!/usr/bin/env python3
"""Measures what `airlock run` costs, for docs/sandbox.md.

1. Start-up: `airlock run -- true` against `true` alone, alternated in the same run (so load
   changes hit both), N rounds; prints median, p10 and p90 of each and of the difference.
2. Egress throughput: a local server sends SIZE MiB; `curl` fetches it directly (unconfined) and
   through `airlock run --grant G` (confined, through the egress proxy), alternated, R rounds.

Usage: python3 overhead.py AIRLOCK_BINARY [rounds=200] [size_mib=256] [throughput_rounds=5]
                          [OTHER_AIRLOCK_BINARY]
With OTHER_AIRLOCK_BINARY (an older build, say) its `airlock run -- true` joins the rotation, so
both builds are compared under the same load. throughput_rounds=0 skips part 2.
Runs in a temporary HOME, workspace and data directory of its own.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def timed(cmd, **kw):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{cmd} failed: {r.stderr.decode()[-500:]}")
    return dt


def server(size):
    chunk = b"x" * (1 << 20)
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def serve(c):
        try:
            c.recv(65536)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (size << 20))
            for _ in range(size):
                c.sendall(chunk)
        finally:
            c.close()

    def loop():
        while True:
            c, _ = ls.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return ls.getsockname()[1]


def main():
    airlock = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    trounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    d = tempfile.mkdtemp(prefix="airlock-overhead-")
    home, ws, data = (os.path.join(d, x) for x in ("home", "ws", "data"))
    for x in (home, ws, data):
        os.makedirs(x)
    env = dict(os.environ, HOME=home, AIRLOCK_DATA_DIR=data)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "no_proxy"):
        env.pop(k, None)
    true = "/bin/true"
    other = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else None
    cmds = [("true", [true]), ("airlock run -- true", [airlock, "run", "--", true])]
    if other:
        cmds.append(("other: airlock run -- true", [other, "run", "--", true]))
    for _ in range(10):  # warm the page cache
        for _, cmd in cmds[1:]:
            timed(cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL)
    times = {name: [] for name, _ in cmds}
    for i in range(rounds):
        # Each command goes first, second, … in turn, so load changes hit all of them alike.
        k = i % len(cmds)
        for name, cmd in cmds[k:] + cmds[:k]:
            times[name].append(timed(cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL) * 1000)
    out = {"rounds": rounds, "loadavg": os.getloadavg()}
    series = list(times.items())
    for name, xs in series[1:]:
        series.append((f"added by {name}", [c - b for b, c in zip(times["true"], xs)]))
    for name, xs in series:
        out[name] = {"median_ms": round(statistics.median(xs), 3), "p10_ms": round(pct(xs, 10), 3),
                     "p90_ms": round(pct(xs, 90), 3)}
    if trounds == 0:
        print(json.dumps(out, indent=1))
        return
    port = server(size)
    g = subprocess.run([airlock, "grant", "add", "--agent", "user", "--by", "bench", "--network",
                        f"127.0.0.1:{port}", "--json"], env=env, capture_output=True, text=True, check=True)
    gid = json.loads(g.stdout)["id"]
    url = f"http://127.0.0.1:{port}/blob"
    direct, proxied = [], []
    for i in range(trounds):
        pair = [("direct", ["curl", "-s", "-o", "/dev/null", url]),
                ("proxied", [airlock, "run", "--grant", gid, "--", "curl", "-s", "-o", "/dev/null", url])]
        if i % 2:
            pair.reverse()
        for name, cmd in pair:
            mibs = size / timed(cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL)
            (direct if name == "direct" else proxied).append(mibs)
    out["throughput"] = {"size_mib": size, "rounds": trounds,
                         "direct_mib_s": {"median": round(statistics.median(direct)), "min": round(min(direct)), "max": round(max(direct))},
                         "proxied_mib_s": {"median": round(statistics.median(proxied)), "min": round(min(proxied)), "max": round(max(proxied))}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
