"""Speed benchmarks (``make bench``): writes benchmarks/RESULTS.md and prints it.

Workloads are timed after a JIT warm-up run on the same argument types, so
compilation is never counted. Data: MNIST from ``--data-dir`` when present,
else an MNIST-shaped synthetic stream (d = 784, K = 10, ~19 % non-zero pixels
in [0, 1], the density of MNIST).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import noisyfeedback as nf

HERE = Path(__file__).resolve().parent


def mnist_shaped(n: int = 60_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    protos = (rng.random((10, 784)) < 0.19) * rng.random((10, 784))
    y = rng.integers(0, 10, size=n)
    X = protos[y] * (rng.random((n, 784)) < 0.9)
    X += (rng.random((n, 784)) < 0.02) * rng.random((n, 784))
    return np.clip(X, 0, 1), y.astype(np.int64)


def load_stream(data_dir: str | None):
    if data_dir:
        try:
            X, y = nf.datasets.load("mnist", split="train", data_dir=data_dir)
            return X, y, "MNIST train (60000 x 784)"
        except (FileNotFoundError, AttributeError, ValueError) as exc:
            print(f"MNIST not loaded ({exc}); using an MNIST-shaped synthetic stream", file=sys.stderr)
    X, y = mnist_shaped()
    return X, y, "MNIST-shaped synthetic (60000 x 784, 19 % dense)"


def time_simulate(make, X, y, channel, n_rounds, repeats=3):
    nf.simulate(make(), X, y, channel, n_rounds=1000, seed=0)  # JIT warm-up (also cached on disk)
    best = None
    for r in range(repeats):
        t = nf.simulate(make(), X, y, channel, n_rounds=n_rounds, seed=r)
        if best is None or t.wall_time < best.wall_time:
            best = t
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args(argv)

    X, y, data_name = load_stream(args.data_dir)
    rows = []
    workloads = [
        ("Banditron, NoisyBandit(0, 0)", lambda: nf.Banditron(10, gamma=0.05, seed=0), nf.feedback.NoisyBandit(0, 0)),
        ("Banditron, NoisyBandit(0.2, 0.4)", lambda: nf.Banditron(10, gamma=0.05, seed=0), nf.feedback.NoisyBandit(0.2, 0.4)),
        ("Perceptron, FullLabel", lambda: nf.Perceptron(10), nf.feedback.FullLabel()),
    ]
    for name, make, channel in workloads:
        t = time_simulate(make, X, y, channel, args.rounds)
        rows.append((f"{name} on {data_name}", f"{t.rounds_per_second:,.0f} rounds/s", f"{t.error_rate:.4f}",
                     f"{t.n_rounds:,} rounds in {t.wall_time:.2f} s"))
        print(f"{rows[-1][0]}: {rows[-1][1]} (online error {rows[-1][2]})", flush=True)

    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}"
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine}. Date: {dt.date.today().isoformat()}. noisyfeedback {nf.__version__}.",
        "Timings exclude JIT compilation; best of 3 runs; one core (the loops are single-threaded).",
        "",
        "| workload | ours | online error | detail |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
        "",
    ]
    text = "\n".join(lines)
    Path(args.out).write_text(text)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
