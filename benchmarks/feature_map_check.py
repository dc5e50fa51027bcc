"""The default feature map (``features="auto"``) on the reported runs, and the papers' learners on the same map.

Per data set and noise setting of ``make bench`` (1e6 rounds, seed 0, rows scaled to unit norm as in
recommend.py): SquareCB and EpsilonGreedy with defaults against the former default (``features="linear"``,
everything else the same), the map and the oracle the default took, whether the two runs are the same bits
(the same weights at the end: they must be wherever ``auto`` keeps the raw features), and rounds per CPU
second. With ``--papers-on-map``, the papers' learners (RCNBF with the channel's flip rates; Banditron, BPA,
SOBA with its diagonal A) run on the degree-2 map of the rows (``kernels.features.quadratic_rows``, rescaled
to unit norm), each γ tuned on seed 100 on the paper's grid extended past a binding edge exactly as in
recommend.py: where the gain of the default comes from (the learner, or the richer features).

    nice -n 10 python benchmarks/feature_map_check.py --data-dir DATA --datasets letter --papers-on-map
    nice -n 10 python benchmarks/feature_map_check.py --data-dir DATA --datasets digits
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

from recommend import RCNBF_GAMMAS, SETTINGS, load, tuned  # noqa: E402

import noisyfeedback as nf  # noqa: E402
from noisyfeedback.kernels.features import quadratic_dimension, quadratic_rows  # noqa: E402
from noisyfeedback.learners._linear import finite_scale_rows  # noqa: E402


def quadratic_features(X) -> np.ndarray:
    """The rows' degree-2 map as SquareCB's default sees it, each rescaled to unit norm."""
    X = np.ascontiguousarray(finite_scale_rows(np.asarray(X, dtype=np.float64)))
    Z = np.empty((X.shape[0], quadratic_dimension(X.shape[1])))
    quadratic_rows(X, Z)
    n = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(n > 0, n, 1.0)


def _run(learner, X, y, ch, rounds):
    cpu = time.process_time()
    tr = nf.simulate(learner, X, y, ch, n_rounds=rounds, seed=0)
    cpu = time.process_time() - cpu
    return {"error": tr.error_rate, "features_": learner.features_, "oracle_": learner.oracle_,
            "W": learner.W_.copy(), "cpu_rate": rounds / cpu if cpu > 0 else float("nan")}


def rows(data_dir, names, rounds: int, tune_rounds: int, papers_on_map: bool, settings,
         ours: bool = True) -> list[dict]:
    out = []
    for name in names:
        X, y = load(name, data_dir)
        K = int(y.max()) + 1
        Z = quadratic_features(X) if papers_on_map else None
        for cls in (nf.SquareCB, nf.EpsilonGreedy) if ours else ():  # compiled (or from numba's cache) before timing
            for features in ("auto", "linear"):
                nf.simulate(cls(K, features=features, seed=0), X, y, nf.feedback.NoisyBandit(0.1, 0.1),
                            n_rounds=100, seed=0)
        for r0, r1 in settings:
            ch = nf.feedback.NoisyBandit(r0, r1)
            row = {"dataset": name, "d": X.shape[1], "setting": (r0, r1)}
            for cls in (nf.SquareCB, nf.EpsilonGreedy) if ours else ():
                a = _run(cls(K, seed=0), X, y, ch, rounds)
                b = _run(cls(K, features="linear", seed=0), X, y, ch, rounds)
                row[cls.__name__] = {"default": a, "linear": b,
                                     "same_bits": a["W"].shape == b["W"].shape and bool(np.array_equal(a["W"], b["W"]))}
            if papers_on_map:
                best = None
                for lname, make in (
                        ("RCNBF", lambda g, s: nf.RCNBF(K, gamma=g, rho0=r0, rho1=r1, seed=s)),
                        ("Banditron", lambda g, s: nf.Banditron(K, gamma=g, seed=s)),
                        ("BPA", lambda g, s: nf.BPA(K, gamma=g, seed=s)),
                        ("SOBA", lambda g, s: nf.SOBA(K, gamma=g, diagonal=True, seed=s))):
                    t = tuned(make, RCNBF_GAMMAS, Z, y, ch, rounds, tune_rounds)
                    row[lname + " on map"] = (t.trace.error_rate, t.gamma)
                    if best is None or t.trace.error_rate < best[1]:
                        best = (f"{lname} γ={t.gamma:g}", t.trace.error_rate)
                row["best on map"] = best
            print({k: v if not isinstance(v, dict) else {c: ({kk: vv for kk, vv in r.items() if kk != "W"}
                                                          if isinstance(r, dict) else r) for c, r in v.items()}
                   for k, v in row.items()}, file=sys.stderr, flush=True)
            out.append(row)
    return out


def _papers_cells(r) -> tuple[str, str]:
    if "best on map" not in r:
        return "", ""
    papers = " / ".join(f"{r[k + ' on map'][0]:.3f} ({r[k + ' on map'][1]:g})"
                        for k in ("RCNBF", "Banditron", "BPA", "SOBA"))
    return papers, f"{r['best on map'][1]:.3f} ({r['best on map'][0]})"


def render(rs: list[dict], rounds: int) -> str:
    if rs and "SquareCB" not in rs[0]:  # --papers-only
        lines = [f"{rounds:,} rounds, seed 0: the papers' learners on the rows' degree-2 map (γ tuned on seed 100, "
                 "paper grid extended past a binding edge).", "",
                 "| dataset | d | (ρ0, ρ1) | RCNBF / Banditron / BPA / SOBA (γ) | best on the map |",
                 "|---|---|---|---|---|"]
        for r in rs:
            papers, best = _papers_cells(r)
            lines.append(f"| {r['dataset']} | {r['d']} | ({r['setting'][0]:g}, {r['setting'][1]:g}) | {papers} | "
                         f"{best} |")
        return "\n".join(lines) + "\n"
    lines = [f"{rounds:,} rounds, seed 0: defaults (`features=\"auto\"`) against the former default "
             "(`features=\"linear\"`).", "",
             "| dataset | d | (ρ0, ρ1) | map, oracle taken | SquareCB default | SquareCB linear | same bits | "
             "EpsilonGreedy default | EpsilonGreedy linear | SquareCB rounds/s (CPU): default; linear | "
             "papers' learners on the map: RCNBF / Banditron / BPA / SOBA (γ) | best on the map |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        s, e = r["SquareCB"], r["EpsilonGreedy"]
        papers, best = _papers_cells(r)
        lines.append(
            f"| {r['dataset']} | {r['d']} | ({r['setting'][0]:g}, {r['setting'][1]:g}) | "
            f"{s['default']['features_']}, {s['default']['oracle_']} | {s['default']['error']:.4f} | "
            f"{s['linear']['error']:.4f} | {'yes' if s['same_bits'] and e['same_bits'] else 'no'} | "
            f"{e['default']['error']:.4f} | {e['linear']['error']:.4f} | "
            f"{s['default']['cpu_rate'] / 1e3:,.0f}k; {s['linear']['cpu_rate'] / 1e3:,.0f}k | {papers} | {best} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--tune-rounds", type=int, default=None, help="rounds of the γ-tuning runs (default: --rounds)")
    ap.add_argument("--datasets", default="letter")
    ap.add_argument("--settings", default=None, help="indices into SETTINGS, e.g. 0,2 (default: all)")
    ap.add_argument("--papers-on-map", action="store_true")
    ap.add_argument("--papers-only", action="store_true", help="with --papers-on-map: skip ours")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    settings = SETTINGS if args.settings is None else [SETTINGS[int(i)] for i in args.settings.split(",")]
    text = render(rows(args.data_dir, args.datasets.split(","), args.rounds, args.tune_rounds or args.rounds,
                       args.papers_on_map, settings, ours=not args.papers_only), args.rounds)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
