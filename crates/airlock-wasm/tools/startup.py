#!/usr/bin/env python3
"""Start-up of `airlock tool run MODULE` against `true`, alternated in one run.

    python3 crates/airlock-wasm/tools/startup.py AIRLOCK_BINARY MODULE.wasm [ROUNDS]

Prints the median, p10 and p90 of each and of the difference, in milliseconds. The data
directory is a fresh temporary one, so no store is opened (no grant is passed).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time


def quantiles(xs):
    xs = sorted(xs)
    at = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]
    return statistics.median(xs), at(0.10), at(0.90)


def timed(argv, env):
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"{argv} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return took


def main():
    airlock, module = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, AIRLOCK_DATA_DIR=data)
        base, tool = [], []
        for _ in range(rounds):
            base.append(timed(["true"], env))
            tool.append(timed([airlock, "tool", "run", module], env))
    diff = [t - b for t, b in zip(tool, base)]
    for name, xs in [("true", base), ("airlock tool run", tool), ("added", diff)]:
        m, p10, p90 = quantiles(xs)
        print(f"{name:18} median {m:6.2f} ms  p10 {p10:6.2f} ms  p90 {p90:6.2f} ms")


if __name__ == "__main__":
    main()
