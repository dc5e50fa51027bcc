"""SquareCB with its default oracle ("auto") against the former default (oracle="adagrad") on the reported runs.

Per data set and noise setting of ``make bench``: the online error of ``SquareCB(K)`` and of
``SquareCB(K, oracle="adagrad")`` (1e6 rounds, seed 0, rows scaled to unit norm as in recommend.py), the
oracle "auto" took, whether the two runs are the same bits (same weights at the end), and rounds/s of the
default, by the wall clock and per CPU second of the process (the second is robust to other jobs sharing the
machine). Where d > AUTO_RIDGE_MAX_FEATURES (MNIST, Fashion-MNIST) "auto" is AdaGrad: same errors, same speed.

    nice -n 10 python benchmarks/auto_oracle_check.py --data-dir DATA --datasets mnist,fashion_mnist
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from recommend import SETTINGS, load  # noqa: E402

import noisyfeedback as nf  # noqa: E402


def rows(data_dir, names, rounds: int) -> list[dict]:
    out = []
    for name in names:
        X, y = load(name, data_dir)
        K = int(y.max()) + 1
        for oracle in ("auto", "adagrad"):  # compiled (or loaded from numba's cache) before timing
            nf.simulate(nf.SquareCB(K, oracle=oracle, seed=0), X, y, nf.feedback.NoisyBandit(0.1, 0.1),
                        n_rounds=100, seed=0)
        for r0, r1 in SETTINGS:
            ch = nf.feedback.NoisyBandit(r0, r1)
            row = {"dataset": name, "d": X.shape[1], "setting": (r0, r1)}
            for oracle in ("auto", "adagrad"):
                learner = nf.SquareCB(K, seed=0) if oracle == "auto" else nf.SquareCB(K, oracle=oracle, seed=0)
                cpu = time.process_time()
                tr = nf.simulate(learner, X, y, ch, n_rounds=rounds, seed=0)
                cpu = time.process_time() - cpu
                row[oracle] = {"error": tr.error_rate, "oracle_": learner.oracle_, "W": learner.W_.copy(),
                               "rate": tr.rounds_per_second, "cpu_rate": rounds / cpu if cpu > 0 else float("nan")}
            row["same_bits"] = bool(np.array_equal(row["auto"]["W"], row["adagrad"]["W"]))
            print({k: ({kk: vv for kk, vv in v.items() if kk != "W"} if isinstance(v, dict) else v)
                   for k, v in row.items()}, file=sys.stderr, flush=True)
            out.append(row)
    return out


def render(rs: list[dict], rounds: int) -> str:
    lines = [f"SquareCB, {rounds:,} rounds, seed 0: the default (`oracle=\"auto\"`) against the former default "
             "(`oracle=\"adagrad\"`).", "",
             "| dataset | d | (ρ0, ρ1) | oracle taken | error, default | error, former default | same bits | "
             "default rounds/s (wall) | default rounds/s (CPU) | former rounds/s (CPU) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        a, b = r["auto"], r["adagrad"]
        lines.append(f"| {r['dataset']} | {r['d']} | ({r['setting'][0]:g}, {r['setting'][1]:g}) | {a['oracle_']} | "
                     f"{a['error']:.4f} | {b['error']:.4f} | {'yes' if r['same_bits'] else 'no'} | "
                     f"{a['rate'] / 1e6:.2f}M | {a['cpu_rate'] / 1e6:.2f}M | {b['cpu_rate'] / 1e6:.2f}M |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--datasets", default="mnist,fashion_mnist")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    text = render(rows(args.data_dir, args.datasets.split(","), args.rounds), args.rounds)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
