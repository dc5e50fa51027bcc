"""The comparison with Vowpal Wabbit at full length: Vowpal Wabbit's best configuration run to 1e6 rounds.

``recommend.py`` runs VW's small grids at the rounds per-example driving from Python affords (50,000,
about 1.7k rounds/s for ``--squarecb -q sa``) and picks the best configuration of each mode on that run.
This script takes those picks from a ``recommend.py`` table (the row's better VW mode and its flags) and
runs that one configuration on to ``--rounds`` on the same row order (simulation seed 0), next to
SquareCB with default parameters over the same rounds, in the same process. The grid is not rerun: at 1e6
rounds it would cost 6 configurations x 10 minutes a setting.

    python benchmarks/vw_long.py --data-dir DATA --from benchmarks/results/recommend_vw50k.md \\
        --datasets mnist --out benchmarks/results/vw_long_mnist.csv
    python benchmarks/vw_long.py --render benchmarks/results/vw_long_*.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import peers  # noqa: E402
from recommend import load  # noqa: E402

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.simulate import round_order, simulation_streams  # noqa: E402

_CELL = re.compile(r"([0-9.]+) \(`([^`]*)`\)")


def vw_picks(table: str) -> list[dict]:
    """The noisy-bandit rows of a recommend.py table: dataset, setting, and VW's better mode at the table's
    VW rounds (mode, flags, error there)."""
    picks = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or not cells[1].startswith("("):
            continue
        modes = []
        for mode, cell in (("epsilon", cells[8]), ("squarecb", cells[9])):
            m = _CELL.fullmatch(cell)
            if m:
                modes.append((float(m.group(1)), mode, m.group(2)))
        if not modes:
            continue
        err, mode, flags = min(modes)
        r0, r1 = (float(v) for v in cells[1].strip("()").split(","))
        picks.append({"dataset": cells[0], "setting": (r0, r1), "mode": mode, "flags": flags, "short_err": err})
    return picks


def render(paths: list[str]) -> str:
    """A Markdown table of the rows of one or more output CSVs."""
    lines = ["| dataset | (ρ0, ρ1) | rounds | SquareCB (defaults) | VW mode, flags (chosen at 50k) | VW at 50k | "
             "VW | SquareCB / VW | VW rounds/s |", "|---|---|---|---|---|---|---|---|---|"]
    for path in paths:
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                ours, vw = float(r["squarecb"]), float(r["vw"])
                lines.append(f"| {r['dataset']} | ({float(r['rho0']):g}, {float(r['rho1']):g}) | "
                             f"{int(r['rounds']):,} | {ours:.3f} | {r['vw_mode']} `{r['vw_flags']}` | "
                             f"{float(r['vw_short_err']):.3f} | {vw:.3f} | {ours / vw:.2f} | "
                             f"{float(r['vw_rounds_per_s']) / 1e3:.1f}k |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--from", dest="table", default=str(HERE / "results" / "recommend_vw50k.md"))
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--datasets", default="mnist,fashion_mnist")
    ap.add_argument("--out", help="the CSV to write")
    ap.add_argument("--render", nargs="+", metavar="CSV", help="print the Markdown table of these CSVs and stop")
    args = ap.parse_args(argv)
    if args.render:
        print(render(args.render), end="")
        return 0
    if not args.out:
        ap.error("--out is required to run")
    picks = [p for p in vw_picks(Path(args.table).read_text()) if p["dataset"] in args.datasets.split(",")]
    fields = ["dataset", "rho0", "rho1", "rounds", "squarecb", "vw_mode", "vw_flags", "vw_short_err", "vw",
              "vw_rounds_per_s", "vw_seconds"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        data = {}
        for p in picks:
            name = p["dataset"]
            if name not in data:
                data[name] = load(name, args.data_dir)
            X, y = data[name]
            K = int(y.max()) + 1
            r0, r1 = p["setting"]
            ours = nf.simulate(nf.SquareCB(K, seed=0), X, y, nf.feedback.NoisyBandit(r0, r1),
                               n_rounds=args.rounds, seed=0).error_rate
            order = round_order(X.shape[0], args.rounds, simulation_streams(0)[0])
            t0 = time.perf_counter()
            res = peers.vw_bandit(X, y, order, K, r0, r1, p["mode"], p["flags"], seed=0)
            if res is None:
                print("vowpalwabbit is not installed", file=sys.stderr)
                return 1
            rate, err = res
            row = {"dataset": name, "rho0": r0, "rho1": r1, "rounds": args.rounds, "squarecb": f"{ours:.4f}",
                   "vw_mode": p["mode"], "vw_flags": p["flags"], "vw_short_err": p["short_err"], "vw": f"{err:.4f}",
                   "vw_rounds_per_s": f"{rate:.0f}", "vw_seconds": f"{time.perf_counter() - t0:.0f}"}
            w.writerow(row)
            fh.flush()
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
