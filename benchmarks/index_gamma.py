"""SquareCB's default exploration against every fixed γ_scale in hindsight: MNIST, Fashion-MNIST, Letter and
digits (the training splits, rows scaled to unit norm, as the recommended runs), clean and with flips
(0.2, 0.4); ``SquareCB(K, seed=s)`` with its defaults (γ_scale "adaptive") and with γ_scale on the grid 10 … 30,000;
online error of the greedy label (``Trace.error_rate``), mean ± standard error over the seeds (simulate's seed =
the learner's seed). The criterion: the defaults within 1.25× of the best grid point on every row.

    nice -n 10 python benchmarks/index_gamma.py --data-dir DATA --rounds 1000000 --seeds 0,1,2

``--grid-from TABLE`` takes the grid's means from an earlier table of this script (same rounds and seeds) and
runs only the defaults: a fixed γ_scale runs the same arithmetic whatever the default is.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402

GRID = (10.0, 30.0, 100.0, 300.0, 1_000.0, 3_000.0, 10_000.0, 30_000.0)
CHANNELS = {"clean": (0.0, 0.0), "flips (0.2, 0.4)": (0.2, 0.4)}
LABELS = {"mnist": "MNIST", "fashion-mnist": "Fashion-MNIST", "letter": "Letter", "digits": "digits"}
#: the defaults' error at most this many times the best fixed γ_scale's
CRITERION = 1.25


def load(name: str, data_dir):
    if name == "digits":
        return nf.datasets.load(name, normalize=True)
    return nf.datasets.load(name, split="train", data_dir=data_dir, normalize=True)


def errors(X, y, channel, rounds: int, seeds, **params) -> np.ndarray:
    K = int(y.max()) + 1
    return np.array([nf.simulate(nf.SquareCB(K, seed=s, **params), X, y, nf.feedback.NoisyBandit(*channel),
                                 n_rounds=rounds, seed=s).error_rate for s in seeds])


def read_grid(path: str) -> dict[tuple[str, str], dict[float, float]]:
    """(data set label, channel) -> {γ_scale: mean error} from a table written by `table`."""
    out = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == len(GRID) + 5 and cells[0] in LABELS.values():
            out[(cells[0], cells[1])] = {g: float(c) for g, c in zip(GRID, cells[3:3 + len(GRID)])}
    return out


def run(data_dir, datasets, rounds: int, seeds, known=None) -> list[dict]:
    """One row per (data set, channel): the defaults' mean and s.e., each grid point's mean (run, or from
    ``known``), the best."""
    rows = []
    for name in datasets:
        X, y = load(name, data_dir)
        for ch_name, channel in CHANNELS.items():
            default = errors(X, y, channel, rounds, seeds)
            if known is not None:
                grid = {g: np.array([v]) for g, v in known[(LABELS.get(name, name), ch_name)].items()}
            else:
                grid = {g: errors(X, y, channel, rounds, seeds, gamma_scale=g) for g in GRID}
            best = min(grid, key=lambda g: grid[g].mean())
            se = default.std(ddof=1) / np.sqrt(len(seeds)) if len(seeds) > 1 else 0.0
            rows.append({"dataset": LABELS.get(name, name), "channel": ch_name, "default": default.mean(),
                         "default_se": se, "grid": {g: v.mean() for g, v in grid.items()}, "best": best,
                         "ratio": default.mean() / grid[best].mean()})
            print(rows[-1]["dataset"], ch_name, f"{rows[-1]['ratio']:.3f}", flush=True)
    return rows


def table(rows: list[dict], rounds: int, seeds) -> str:
    head = " | ".join(f"γ {g:,.0f}" for g in GRID)
    lines = [f"{rounds:,} rounds, seeds {list(seeds)}; mean online error", "",
             f"| data | channel | SquareCB() | {head} | best | default / best |",
             "|---|---|---|" + "---|" * len(GRID) + "---|---|"]
    for r in rows:
        cells = " | ".join(f"{r['grid'][g]:.4f}" for g in GRID)
        verdict = "" if r["ratio"] <= CRITERION else " (over 1.25)"
        lines.append(f"| {r['dataset']} | {r['channel']} | {r['default']:.4f} ± {r['default_se']:.4f} | {cells} | "
                     f"{r['best']:,.0f} | {r['ratio']:.2f}{verdict} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--datasets", default="mnist,fashion-mnist,letter,digits")
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--grid-from", default=None, help="the grid's means from an earlier table (run the defaults only)")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    known = read_grid(args.grid_from) if args.grid_from else None
    rows = run(args.data_dir, args.datasets.split(","), args.rounds, seeds, known)
    print(table(rows, args.rounds, seeds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
