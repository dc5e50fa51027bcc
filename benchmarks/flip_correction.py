"""SquareCB told flip rates: the policy correction in use (only the rates' differences between actions move the
policy) against the former one (every value gap divided by 1 − ρ0 − ρ1), on Letter (the 16,000 training rows)
with action-dependent flips (ρ0 = 0.3 for the first half of the labels, ρ1 = 0.5 for the second) and uniform
flips (0.1, 0.25); plain SquareCB, told the rates, and estimating them; greedy error of ``nf.simulate``.

    nice -n 10 python benchmarks/flip_correction.py --data-dir DATA --rounds 100000 --seeds 2
"""

from __future__ import annotations

import argparse

import numpy as np

import noisyfeedback as nf
from noisyfeedback.learners.bandit._oracle import OracleBandit

CURRENT = OracleBandit._correction


def former(self):
    """The former correction: the policy read (v − ρ0/m)/(1 − ρ0 − ρ1) whenever a rate was not 0."""
    r0, r1 = self._rates()
    if not (r0.any() or r1.any()):
        return self._NO_RATES, self._NO_RATES
    return r0 / int(self.m), 1.0 - r0 - r1


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args(argv)
    X, y = nf.datasets.load("letter", split="train", data_dir=a.data_dir)
    K = int(y.max()) + 1
    r0 = np.where(np.arange(K) < K // 2, 0.3, 0.0)
    r1 = np.where(np.arange(K) < K // 2, 0.0, 0.5)
    for name, (q0, q1) in {"per-action": (r0, r1), "uniform (0.1, 0.25)": (0.1, 0.25)}.items():
        ch = nf.feedback.NoisyBandit(q0, q1)
        for seed in range(a.seeds):
            res = {}
            for label, corr, kw in (("plain", CURRENT, {}), ("told, now", CURRENT, {"rho0": q0, "rho1": q1}),
                                    ("told, before", former, {"rho0": q0, "rho1": q1}),
                                    ("estimated, now", CURRENT, {"rho0": "estimate", "rho1": "estimate"}),
                                    ("estimated, before", former, {"rho0": "estimate", "rho1": "estimate"})):
                OracleBandit._correction = corr
                try:
                    res[label] = nf.simulate(nf.SquareCB(K, seed=seed, **kw), X, y, ch, n_rounds=a.rounds,
                                             seed=seed).error_rate
                finally:
                    OracleBandit._correction = CURRENT
            print(name, seed, "  ".join(f"{k}: {v:.4f}" for k, v in res.items()), flush=True)


if __name__ == "__main__":
    main()
