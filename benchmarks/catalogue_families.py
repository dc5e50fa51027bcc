"""The catalogue learner's defaults on stream families of our own making (``stream_families.py``), clean and with
flips: per family, the regret of ``CatalogueSquareCB()`` (defaults: greedy first with the ridge oracle; the
rounds at which it switched, per seed) against the best fixed ``gamma_scale`` in
hindsight (a geometric grid 10 … 30,000, every point run on the reported seeds, the best mean taken: an
oracle choice no user can make) and against Vowpal Wabbit's ``--cb_explore_adf --squarecb -q sa`` with the
best of a small grid (learning rate × ``--gamma_scale``, chosen on a separate tuning seed, then run on the
reported seeds). The number is the mean clean regret per round of the played candidates (the best
candidate's click probability minus the played one's), mean ± standard error over the seeds.

    nice -n 10 python benchmarks/catalogue_families.py --seeds 3                  # each family's horizon
    nice -n 10 python benchmarks/catalogue_families.py --rounds 50000 --seeds 1 --vw-tuning-seed 0  # RESULTS.md
    nice -n 10 python benchmarks/catalogue_families.py --rounds 50000 --seeds 1 --grid 30,1000,10000 --no-vw

``--rounds`` caps every family's horizon (the families' horizons run from 50,000 to 500,000 rounds);
``--params`` runs ours with other parameters (JSON, e.g. '{"gamma_scale": 30}': the former default;
'{"gamma_scale": "theory"}': SquareCB's theoretical γ with no tuned constant, `theory_gamma_scale`); ``--grid ''``
runs no grid (ours only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from catalogue_peers import mean_se, vw_available, vw_squarecb  # noqa: E402
from stream_families import FAMILIES, FAMILY, family_stream, regret  # noqa: E402

import noisyfeedback as nf  # noqa: E402

#: the fixed gamma_scale grid of the best-in-hindsight comparison
GAMMA_GRID = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0, 30000.0)
#: VW's grid: learning rate × --gamma_scale (VW's defaults: -l 0.5, --gamma_scale 10)
VW_GRID = tuple((lr, g) for lr in (0.5, 2.0) for g in (10.0, 100.0, 1000.0, 10000.0))
#: flips (ρ0, ρ1): clean and flipped
FLIPS = ((0.0, 0.0), (0.1, 0.25))
#: the seed VW's grid is searched on (never a reported seed)
TUNING_SEED = 100


def theory_gamma_scale(family, n: int) -> float:
    """SquareCB's γ without a tuned constant (Foster & Rakhlin 2020): γ_t = √(K·t / Reg_sq(t)) with K the
    candidates a round and the square-loss regret of a D-weight least-squares oracle Reg_sq(t) ≈ D·ln t, i.e.
    γ_t = √(K·t / (D·ln t)); as the kernel's γ_scale·√(t+1), with ln t taken at the run's last round."""
    D = family.context_dim * family.item_dim + family.item_dim + family.context_dim + 1
    return float(np.sqrt(family.candidates / (D * np.log(n))))


def _ours(stream, n: int, flips, seed: int, switches: list | None = None, **params) -> float:
    learner = nf.CatalogueSquareCB(seed=seed, **params)
    out = regret(learner, stream, n, flips, seed)
    if switches is not None:  # greedy first: the rounds learned at the switch (-1: none)
        switches.append(int(learner.exploration_[0]))
    return out


def family_row(family, n: int, flips, seeds: int, grid, vw_grid, params: dict, workdir: Path,
               tuning_seed: int = TUNING_SEED) -> dict:
    """Regrets of the defaults, of every fixed γ_scale and of VW's best on one family and flip setting."""
    streams = [family_stream(family, n, s) for s in range(seeds)]
    if params.get("gamma_scale") == "theory":
        params = {**params, "gamma_scale": theory_gamma_scale(family, n)}
    switches: list = []
    out = {"default": [_ours(st, n, flips, s, switches, **params) for s, st in enumerate(streams)]}
    for g in grid:
        out[g] = [_ours(st, n, flips, s, gamma_scale=g) for s, st in enumerate(streams)]
    row = {"family": family.name, "flips": flips, "rounds": n, "default": mean_se(out["default"]),
           "params": params, "grid": {g: float(np.mean(out[g])) for g in grid}, "switches": switches}
    if grid:
        best_g = min(grid, key=lambda g: np.mean(out[g]))
        row.update(best_gamma=best_g, best=mean_se(out[best_g]))
    if vw_grid:
        tune = family_stream(family, min(n, 50_000), tuning_seed)
        g = vw_squarecb(tune, min(n, 50_000), flips, tuning_seed, vw_grid, workdir)
        cfg = min(g, key=lambda k: g[k][0])
        vw = [vw_squarecb(st, n, flips, s, [cfg], workdir)[cfg][0] for s, st in enumerate(streams)]
        row.update(vw=mean_se(vw), vw_cfg=cfg)
    return row


def table(rows: list[dict]) -> str:
    lines = [("| family | flips | rounds | CatalogueSquareCB() | switch (rounds) | best fixed γ_scale (hindsight) "
              "| default / best | VW squarecb, best of grid | default / VW |"), "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        vw = (f"{r['vw'][0]:.5f} ± {r['vw'][1]:.5f} (`-l {r['vw_cfg'][0]:g} --gamma_scale {r['vw_cfg'][1]:g}`)"
              if "vw" in r else "not run")
        ratio_vw = f"{r['default'][0] / r['vw'][0]:.2f}" if "vw" in r else "–"
        best = (f"{r['best'][0]:.5f} ± {r['best'][1]:.5f} (γ_scale {r['best_gamma']:g}) "
                f"| {r['default'][0] / r['best'][0]:.2f}") if "best" in r else "not run | –"
        ours = f"{r['default'][0]:.5f} ± {r['default'][1]:.5f}"
        sw = ", ".join("none" if w < 0 else f"{w:,}" for w in r["switches"])
        lines.append(f"| {r['family']} | {r['flips']} | {r['rounds']:,} | {ours} | {sw} | {best} | {vw} | {ratio_vw} |")
    return "\n".join(lines) + "\n"


def section(rounds: int | None = None, seeds: int = 3, grid=GAMMA_GRID, vw: bool = True, families=None,
            params: dict | None = None, tuning_seed: int = TUNING_SEED, flips_settings=FLIPS) -> str:
    """The markdown section for benchmarks/RESULTS.md (``make bench``)."""
    rows = []
    vw_grid = VW_GRID if vw and vw_available() else ()
    with tempfile.TemporaryDirectory() as tmp:
        for fam in families or FAMILIES:
            n = fam.horizon if rounds is None else min(rounds, fam.horizon)
            for flips in flips_settings:
                t0 = time.perf_counter()
                rows.append(family_row(fam, n, flips, seeds, grid, vw_grid, params or {}, Path(tmp), tuning_seed))
                grid_means = ", ".join(f"{g:g}: {v:.5f}" for g, v in rows[-1]["grid"].items())
                print(f"  {fam.name} {flips}: {rows[-1]['default']} {rows[-1]['params']} best "
                      f"{rows[-1].get('best_gamma')} {rows[-1].get('best')} vw {rows[-1].get('vw')} "
                      f"grid {{{grid_means}}} ({time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr, flush=True)
    head = (f"### The catalogue defaults on stream families of our own making\n\n"
            f"{seeds} seed(s) (0..{seeds - 1}); fixed γ_scale grid {', '.join(f'{g:g}' for g in grid)}"
            + (f"; VW's grid `-l` × `--gamma_scale` {len(vw_grid)} configurations on seed {tuning_seed}"
               if vw_grid else "; VW not run") + ". Families: benchmarks/stream_families.py.\n\n")
    return head + table(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--grid", default=",".join(f"{g:g}" for g in GAMMA_GRID))
    ap.add_argument("--families", default=",".join(f.name for f in FAMILIES))
    ap.add_argument("--no-vw", action="store_true")
    ap.add_argument("--params", default="{}")
    ap.add_argument("--vw-tuning-seed", type=int, default=TUNING_SEED,
                    help="the seed VW's grid is searched on (0 with --seeds 1: the best on the reported seed)")
    ap.add_argument("--flips", choices=("both", "clean", "flipped"), default="both")
    a = ap.parse_args(argv)
    flips = {"both": FLIPS, "clean": FLIPS[:1], "flipped": FLIPS[1:]}[a.flips]
    print(section(a.rounds, a.seeds, tuple(float(g) for g in a.grid.split(",") if g), not a.no_vw,
                  [FAMILY[f] for f in a.families.split(",")], json.loads(a.params), a.vw_tuning_seed, flips))


if __name__ == "__main__":
    main()
