"""The sweep that chose the defaults of SquareCB and EpsilonGreedy (see benchmarks/RESULTS.md, "How the defaults were
chosen").

Tuning data are NOT the reported runs: the MNIST and Fashion-MNIST *test* splits (10 000 rows each),
UCI digits and SynSep (seed 100), simulation seeds 100 and up, 200 000 rounds; the reported runs use
the train splits (and Letter, which is not tuned on at all), seeds 0.., 1e6 rounds.

    python benchmarks/tune_oracle.py --data-dir DATA --out /tmp/tune.csv
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import noisyfeedback as nf  # noqa: E402

SETTINGS = [(0.0, 0.0), (0.15, 0.15), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2)]
#: rounds 1-2 (raw rows; benchmarks/RESULTS.md, "How the defaults were chosen") chose AdaGrad over the normalized step,
#: ε = 0.05 and γ_scale = 10, but the best step depended on the features' scale; round 3 (this grid) is on unit-norm
#: rows (as the oracle now sees them)
POLICIES = [("EpsilonGreedy", {"epsilon": e}) for e in (0.02, 0.05)] + \
           [("SquareCB", {"gamma_scale": g}) for g in (3.0, 10.0, 30.0)]
ORACLES = [("adagrad", lr) for lr in (0.03, 0.06, 0.1, 0.2)]
#: ``--ridge``: SquareCB's γ_scale with the ridge oracle (``oracle="auto"``'s choice where m = 1 and d <= 256),
#: which rounds 1-3 did not sweep (the learning rate is unused)
RIDGE_GAMMAS = (3.0, 10.0, 30.0, 100.0)


def datasets(data_dir):
    out = {}
    for name in ("mnist", "fashion_mnist"):
        try:
            out[name + "-test"] = nf.datasets.load(name, split="test", data_dir=data_dir)
        except Exception as exc:  # noqa: BLE001
            print(f"{name} not loaded: {exc}", file=sys.stderr)
    out["digits"] = nf.datasets.load("digits")
    out["synsep-100"] = nf.datasets.synsep(n_samples=10_000, seed=100)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--only", default=None, help="comma-separated dataset names")
    ap.add_argument("--out", default="tune.csv")
    ap.add_argument("--ridge", action="store_true", help="SquareCB's γ_scale with the ridge oracle (RIDGE_GAMMAS)")
    args = ap.parse_args(argv)
    policies, oracles = (([("SquareCB", {"gamma_scale": g}) for g in RIDGE_GAMMAS], [("ridge", 0.05)])
                         if args.ridge else (POLICIES, ORACLES))
    data = datasets(args.data_dir)
    if args.only:
        data = {k: v for k, v in data.items() if k in args.only.split(",")}
    with open(args.out, "a") as f:
        for (dname, (X, y)), (r0, r1) in itertools.product(data.items(), SETTINGS):
            K = int(y.max()) + 1
            ch = nf.feedback.NoisyBandit(r0, r1) if args.m == 1 else nf.feedback.Diluted(args.m, r0, r1)
            for (cls, pol), (oracle, lr) in itertools.product(policies, oracles):
                learner = getattr(nf, cls)(K, m=args.m, oracle=oracle, learning_rate=lr, seed=100, **pol)
                t0 = time.perf_counter()
                tr = nf.simulate(learner, X, y, ch, n_rounds=args.rounds, seed=100)
                pv = list(pol.values())[0]
                f.write(f"{dname},{args.m},{r0},{r1},{cls},{pv},{oracle},{lr},{tr.error_rate:.5f},"
                        f"{time.perf_counter() - t0:.2f}\n")
                f.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
