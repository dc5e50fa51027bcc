"""SquareCB under flips that depend on the action, MNIST: plain, told the per-action rates, estimating them.

Channel (action-dependent): ρ0 = 0.3 for labels 0-4 (a wrong play of those is reported as a hit 30 % of
the time), ρ1 = 0.5 for labels 5-9 (a right play of those is reported as a miss half of the time); and
the uniform flips (0.15, 0.25) where the papers' assumption holds. Learners (defaults otherwise):
``SquareCB()``, ``SquareCB(rho0=R0, rho1=R1)`` (the known rates; under the uniform channel the uniform
rates) and ``SquareCB(rho0="estimate", rho1="estimate")``. Reported: the online error of the greedy
label against the true label over the run (``Trace.error_rate``), the error of the final greedy label on
the test split, and rounds/s.

    nice -n 10 python benchmarks/per_action_mnist.py --data-dir DATA --rounds 1000000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402

R0 = np.array([0.3] * 5 + [0.0] * 5)
R1 = np.array([0.0] * 5 + [0.5] * 5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--dataset", default="mnist")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    X, y = nf.datasets.load(args.dataset, split="train", data_dir=args.data_dir)
    Xt, yt = nf.datasets.load(args.dataset, split="test", data_dir=args.data_dir)
    settings = [("action-dependent", nf.feedback.NoisyBandit(R0, R1), (R0, R1)),
                ("uniform (0.15, 0.25)", nf.feedback.NoisyBandit(0.15, 0.25), (0.15, 0.25))]
    print(f"{args.dataset}, {args.rounds:,} rounds, seed {args.seed}")
    print("| channel | learner | online error | test error | rounds/s |")
    print("|---|---|---|---|---|")
    for name, channel, (r0, r1) in settings:
        learners = [("SquareCB()", nf.SquareCB(10, seed=args.seed)),
                    ("known rates", nf.SquareCB(10, rho0=r0, rho1=r1, seed=args.seed)),
                    ("estimated rates", nf.SquareCB(10, rho0="estimate", rho1="estimate", seed=args.seed))]
        for label, learner in learners:
            t0 = time.perf_counter()
            tr = nf.simulate(learner, X, y, channel, n_rounds=args.rounds, seed=args.seed)
            wall = time.perf_counter() - t0
            test_err = float((learner.predict(Xt) != yt).mean())
            extra = ""
            if label == "estimated rates":
                est = learner.rate_estimates_.round(2)
                extra = (f" (estimates in use: {bool(learner.rate_state_[0])}; rho0 {est[0].tolist()}, "
                         f"rho1 {est[1].tolist()})")
            print(f"| {name} | {label} | {tr.error_rate:.4f} | {test_err:.4f} | {args.rounds / wall:,.0f} |{extra}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
