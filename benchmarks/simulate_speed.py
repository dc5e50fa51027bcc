"""Rounds per second of ``nf.simulate`` on MNIST train, 1e6 rounds, best of 3 (JIT warm-up excluded).

For interleaved A/B runs of two trees (the speed of this machine moves by ±15 % over minutes)::

    git worktree add /tmp/old <commit>
    B=$PWD/benchmarks/simulate_speed.py
    for i in 1 2 3; do
      NUMBA_CACHE_DIR=/tmp/nc_new python $B SquareCB
      (cd /tmp && PYTHONPATH=/tmp/old/src NUMBA_CACHE_DIR=/tmp/nc_old python $B SquareCB)
    done
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import noisyfeedback as nf  # noqa: E402


def make(name: str):
    if name == "RCNBF":
        return lambda: nf.RCNBF(10, gamma=0.05, rho0=0.2, rho1=0.4, seed=0)
    cls = getattr(nf, name)
    return lambda: cls(10, seed=0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("learners", nargs="*", default=["SquareCB", "RCNBF"])
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"), help="the folder of the datasets "
                    "(DATA; default: $NOISYFEEDBACK_DATA)")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    X, y = nf.datasets.load("mnist", split="train", data_dir=args.data_dir)
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    for name in args.learners:
        mk = make(name)
        nf.simulate(mk(), X[:2000], y[:2000], ch, n_rounds=8000, seed=0)
        runs = [nf.simulate(mk(), X, y, ch, n_rounds=args.rounds, seed=0) for _ in range(3)]
        best = min(t.wall_time for t in runs)
        print(f"{nf.__file__}: {name} {args.rounds / best / 1e3:,.0f}k rounds/s, error {runs[0].error_rate:.6f}",
              flush=True)


if __name__ == "__main__":
    main()
