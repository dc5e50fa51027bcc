"""SquareCB under flips that depend on the action, MNIST and Fashion-MNIST: plain, told the per-action rates,
estimating them.

Channel (action-dependent): ρ0 = 0.3 for labels 0-4 (a wrong play of those is reported as a hit 30 % of
the time), ρ1 = 0.5 for labels 5-9 (a right play of those is reported as a miss half of the time); and
the uniform flips (0.15, 0.25) where the papers' assumption holds. Learners (defaults otherwise):
``SquareCB()``, ``SquareCB(rho0=R0, rho1=R1)`` (the known rates; under the uniform channel the uniform
rates) and ``SquareCB(rho0="estimate", rho1="estimate")``, each on the same stream (simulate's seed = the
learner's seed). Reported: the online error of the greedy label against the true label over the run
(``Trace.error_rate``), mean ± standard error over the seeds, and the ratio to ``SquareCB()``'s mean.
The runs are those of agarwal2021's "What we recommend instead" (``lab/recommend_bandit.py``, the task
``agarwal2021.per_action``): the same code and numbers.

Targets: action-dependent flips, known rates ≤ 0.65×, estimated ≤ 0.75× SquareCB(); uniform flips,
estimated ≤ 1.05×.

    nice -n 10 python benchmarks/per_action_mnist.py --data-dir DATA --rounds 1000000 --seeds 0,1,2,3,4
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

from noisyfeedback.lab import recommend_bandit as rb  # noqa: E402
from noisyfeedback.lab.papers.agarwal2021.tasks import per_action_setting  # noqa: E402

LABELS = {"mnist": "MNIST", "fashion-mnist": "Fashion-MNIST"}


def run(data_dir, datasets=("mnist", "fashion-mnist"), rounds: int = 1_000_000, seeds=(0, 1, 2)) -> list[dict]:
    """One row per (data set, setting, learner): mean and standard error of the online error over the seeds,
    the ratio to SquareCB()'s mean, the wall time of the runs, and (estimated rates) in how many runs the
    estimates were in use at the end."""
    rows = []
    for name in datasets:
        ds = {"name": name, "normalize": True, "label": LABELS.get(name, name)}
        for setting in rb.PER_ACTION_SETTINGS:
            runs = []
            t0 = time.perf_counter()
            for seed in seeds:
                runs += per_action_setting({"dataset": ds, "setting": setting, "seed": int(seed), "n_rounds": rounds,
                                            "_data_dir": data_dir})
            wall = time.perf_counter() - t0
            means = {}
            for label in rb.PER_ACTION_LEARNERS:
                v = np.array([r["error_rate"] for r in runs if r["learner"] == label])
                means[label] = float(v.mean())
                row = {"dataset": ds["label"], "setting": setting, "learner": label, "seeds": len(v),
                       "rounds": rounds, "mean": float(v.mean()),
                       "se": float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0,
                       "ratio": float(v.mean()) / means[rb.PER_ACTION_LEARNERS[0]], "wall_s": wall}
                in_use = [r["estimates_in_use"] for r in runs if r["learner"] == label and "estimates_in_use" in r]
                if in_use:
                    row["in_use"] = f"{sum(in_use)} of {len(in_use)}"
                rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| data | channel | learner | online error (mean ± SE) | / SquareCB() | target | estimates in use |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["learner"] == "SquareCB":
            target = ""
        elif r["setting"] == "action-dependent":
            target = f"≤ {rb.PER_ACTION_RATIOS['known' if 'known' in r['learner'] else 'estimated']:g}"
        else:
            target = f"≤ {rb.PER_ACTION_RATIOS['uniform']:g}" if "estimated" in r["learner"] else ""
        lines.append(f"| {r['dataset']} | {r['setting']} | {r['learner']} | {r['mean']:.4f} ± {r['se']:.4f} | "
                     f"{r['ratio']:.3f} | {target} | {r.get('in_use', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--datasets", default="mnist,fashion-mnist")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seeds", default="0,1,2")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = run(args.data_dir, args.datasets.split(","), args.rounds, seeds)
    print(f"{args.rounds:,} rounds, seeds {seeds}")
    print(table(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
