"""Catalogue learners against Vowpal Wabbit run natively on the same streams, with seeds and standard errors.

Every VW run reads a text file that VW parses and learns from in its own loop (the ``vw`` binary when
it is on the path, else ``vowpalwabbit.Workspace`` given ``-d file`` and run by its parser): nothing is
fed to VW one example at a time from Python.

``churn`` — the synthetic ranking stream (items arriving and retiring; about half of the candidates younger
than 200 rounds), one slot, flips (0, 0) and (0.2, 0.3). Ours: ``CatalogueSquareCB`` with its defaults in
``nf.simulate``. Baseline: the index ``SquareCB`` over the 10 positions of the candidate list (context
features only: it cannot see the items). VW: ``--cbify_ldf --cb_explore_adf --squarecb -q sa``, VW's own
interactive loop over a cost-sensitive multi-line file: each round's candidates are action lines with the
context (namespace ``s``) and the item (namespace ``a``) features, each line's cost is the realised
(flipped) click of that candidate as −1/0, and VW sees only the cost of the candidate it plays. The
number compared is the mean clean regret per round of the *played* candidates (the best candidate's click
probability minus the played one's), for VW read from its ``-p`` output (the played action per round).

``multiclass`` — MNIST or Letter converted to candidate lists (each class a candidate with a one-hot
feature, 5 to K candidates a round, the label in the list with probability 0.9), flips (0.2, 0.4). The
error compared is the played error (a round whose list holds the label counts an error when the played
candidate is not it; rounds without the label count none), the same for both; ours' greedy error is shown
too.

``slots`` — the synthetic stream with 3 positions examined with probabilities (1, 0.6, 0.35). VW has no
interactive loop for several slots, so both learn from the same logged file: uniformly random pages on
the first 90 % of the rounds (per-slot clicks c_j·r(x, item), the slot's conditional probability logged),
written in VW's CCB format; VW ``--ccb_explore_adf -q sa`` learns from it natively and predicts the
last 10 % (unlabelled examples of the same file); ours is ``CatalogueSquareCB(n_slots=3)`` (defaults,
examination estimated) given the same log with ``learn``. Compared: the expected clean clicks per page
Σ_j c_j·r(x, item_j) of each one's greedy page on the last 10 %, and (ours) the per-round Spearman
correlation of the item scores with the true click probabilities there.

VW's grid (learning rate × γ for ``--squarecb``; learning rate for CCB, whose greedy page on a fixed log
does not depend on the exploration) is searched on a separate tuning seed and its best configuration is
reported on the reported seeds; VW's other options keep their defaults.

    nice -n 10 python benchmarks/catalogue_peers.py churn --rounds 200000 --seeds 3
    nice -n 10 python benchmarks/catalogue_peers.py multiclass --dataset letter --data-dir DATA
    nice -n 10 python benchmarks/catalogue_peers.py slots --rounds 50000 --seeds 3

``--ours-only`` runs ours (and the index baseline) without VW: VW's streams, clicks and logs do not depend
on our learner, so its recorded numbers stand when only our defaults change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import noisyfeedback as nf  # noqa: E402

#: VW's grid for --cb_explore_adf --squarecb: learning rates × gamma_scale
SQUARECB_GRID = [(lr, g) for lr in (0.1, 0.5, 2.0) for g in (10.0, 100.0)]
#: VW's grid for --ccb_explore_adf (greedy pages from a fixed log): learning rates
CCB_GRID = [0.1, 0.5, 2.0]
#: the seed of the streams the grids are searched on (never a reported seed)
TUNING_SEED = 100
EXAMINATION = (1.0, 0.6, 0.35)


def mean_se(xs) -> tuple[float, float]:
    xs = np.asarray(xs, dtype=float)
    return float(xs.mean()), float(xs.std(ddof=1) / np.sqrt(len(xs))) if len(xs) > 1 else float("nan")


def fmt(ms: tuple[float, float], digits: int = 4) -> str:
    return f"{ms[0]:.{digits}f} ± {ms[1]:.{digits}f}"


# --------------------------------------------------------------------------- VW
#: set by ``--ours-only``: VW is not run (its recorded numbers stand where its streams are unchanged)
SKIP_VW = False


def vw_available() -> bool:
    if SKIP_VW:
        return False
    if shutil.which("vw"):
        return True
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def run_vw(args: str) -> float:
    """Run VW natively on the file named in ``args`` (``-d``); returns the wall seconds."""
    t0 = time.perf_counter()
    vw = shutil.which("vw")
    if vw:
        subprocess.run([vw, *args.split()], check=True)
    else:
        import vowpalwabbit

        vowpalwabbit.Workspace(args).finish()  # with -d the package runs VW's own parser and learner loop
    return time.perf_counter() - t0


def _row_strings(M, prefix: str = "", digits: int = 6) -> list[str]:
    """``name:value`` text of each row's non-zeros (dense or CSR rows)."""
    import scipy.sparse as sp

    S = sp.csr_matrix(M)
    out = []
    ind, dat, ptr = S.indices, S.data, S.indptr
    for i in range(S.shape[0]):
        lo, hi = ptr[i], ptr[i + 1]
        out.append(" ".join(f"{prefix}{j}:{v:.{digits}g}" for j, v in zip(ind[lo:hi].tolist(), dat[lo:hi].tolist())))
    return out


def realised_clicks(stream, rows: np.ndarray, flips, rng) -> np.ndarray:
    """A click for every candidate of the rounds ``rows`` (in order, candidates concatenated):
    1[u < r], then flipped with probabilities (rho0, rho1) — each candidate's own draw, so the candidate
    VW plays sees the click distribution ours sees."""
    r = stream.rounds
    idx = np.concatenate([np.arange(r.offsets[i], r.offsets[i + 1]) for i in rows])
    clean = rng.random(idx.shape[0]) < stream.rewards[idx]
    u = rng.random(idx.shape[0])
    return np.where(clean, u >= flips[1], u < flips[0]).astype(np.int64), idx


def write_cs_ldf(path: Path, ctx: list[str], items: list[str], stream, rows: np.ndarray, clicks: np.ndarray) -> None:
    """The rounds ``rows`` as VW's cost-sensitive multi-line file for ``--cbify_ldf``: per candidate one line
    ``position:cost |s context |a item`` (position 1-based, as cbify_ldf looks costs up by it; cost −1 for
    a click, 0 for none), a blank line after each round. The context sits on every line: cbify_ldf takes
    no shared line (it would be one more action)."""
    off = stream.rounds.offsets
    p = 0
    with open(path, "w") as fh:
        for i in rows:
            lo, hi = off[i], off[i + 1]
            c = ctx[i]
            lines = []
            for r in range(lo, hi):
                lines.append(f"{r - lo + 1}:{-clicks[p]} |s {c} |a {items[r]}\n")
                p += 1
            fh.write("".join(lines))
            fh.write("\n")


def vw_played(pred: Path, stream, rows: np.ndarray) -> np.ndarray:
    """The played candidate of each round from cbify_ldf's ``-p`` output (one number per action line: the
    1-based position on the played line, 0 elsewhere)."""
    vals = np.loadtxt(pred, dtype=np.float64).astype(np.int64).ravel()
    sizes = np.diff(stream.rounds.offsets)[rows]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    if vals.shape[0] != sizes.sum():
        raise RuntimeError(f"VW wrote {vals.shape[0]} predictions for {sizes.sum()} action lines")
    played = np.add.reduceat(vals, starts) - 1
    if (played < 0).any() or (played >= sizes).any():
        raise RuntimeError("could not read the played actions from VW's predictions")
    return played


def vw_squarecb(stream, n_rounds: int, flips, seed: int, grid, workdir: Path, ctx=None, items=None,
                digits: int = 6) -> dict:
    """VW --cbify_ldf --cb_explore_adf --squarecb on n_rounds rounds of the stream (cycled) for every (lr, γ)
    of ``grid``: {(lr, γ): (mean clean regret of the played candidates, played error, seconds)}."""
    n = stream.rounds.n_rounds
    rows = np.arange(n_rounds) % n
    ctx = _row_strings(stream.rounds.context, digits=digits) if ctx is None else ctx
    items = _row_strings(stream.rounds.items, digits=digits) if items is None else items
    clicks, _ = realised_clicks(stream, rows, flips, np.random.default_rng([seed, 7]))
    path = workdir / f"cbify_ldf_{seed}.txt"
    pred = workdir / f"cbify_ldf_{seed}.pred"
    write_cs_ldf(path, ctx, items, stream, rows, clicks)
    off = stream.rounds.offsets
    best = np.array([stream.rewards[off[i]:off[i + 1]].max() for i in range(n)])[rows]
    out = {}
    for lr, g in grid:
        secs = run_vw(f"--cbify_ldf --cb_explore_adf --squarecb --gamma_scale {g} -l {lr} -q sa --quiet "
                      f"--random_seed {seed} -d {path} -p {pred}")
        played = vw_played(pred, stream, rows)
        got = stream.rewards[off[rows] + played]
        out[(lr, g)] = (float((best - got).mean()), float((got < best).mean()), secs)
    path.unlink(missing_ok=True)
    pred.unlink(missing_ok=True)
    return out


# --------------------------------------------------------------------------- ours and the index baseline
def ours(stream, n_rounds: int, flips, seed: int, **params) -> dict:
    tr = nf.simulate(nf.CatalogueSquareCB(seed=seed, **params), stream, None, nf.feedback.NoisyBandit(*flips),
                     n_rounds=n_rounds, seed=seed)
    return {"regret": tr.metrics["regret_rate"], "greedy_error": tr.error_rate, "secs": tr.wall_time}


def index_regret(stream, rounds: int, flips, seed: int) -> float:
    from catalogue_quality import index_regret as f

    return f(stream, rounds, flips, seed)


def _label(cfg) -> str:
    return f"`-l {cfg[0]:g} --gamma_scale {cfg[1]:g}`" if isinstance(cfg, tuple) else f"`-l {cfg:g}`"


# --------------------------------------------------------------------------- churn
def churn(rounds: int, seeds: int, grid_rounds: int, workdir: Path, flips_list=((0.0, 0.0), (0.2, 0.3))) -> str:
    grid_rounds = min(grid_rounds, rounds)
    lines = [f"### New items: the churn stream, {rounds:,} rounds", "",
             f"Mean clean regret per round of the played candidates, mean ± s.e. over seeds 0..{seeds - 1} "
             f"(stream and learners seeded alike). VW's configuration: best of {len(SQUARECB_GRID)} "
             f"(`-l` × `--gamma_scale`) on a separate stream (seed {TUNING_SEED}, {grid_rounds:,} rounds).", "",
             "| flips (ρ0, ρ1) | CatalogueSquareCB (defaults) | ours, `item_norm=\"unit\"` | index SquareCB "
             "(positions) | VW squarecb, best | ours / index | ours / VW | ours `item_norm=\"unit\"` / VW "
             "| VW grid (tuning seed) |", "|---|---|---|---|---|---|---|---|---|"]
    vw = vw_available()
    for flips in flips_list:
        grid_txt, best_cfg = "", None
        if vw:
            st = nf.datasets.ranking_stream(n_rounds=grid_rounds, seed=TUNING_SEED, examination=None)
            g = vw_squarecb(st, grid_rounds, flips, TUNING_SEED, SQUARECB_GRID, workdir)
            best_cfg = min(g, key=lambda k: g[k][0])
            grid_txt = "; ".join(f"{_label(k)} {v[0]:.4f}" for k, v in g.items())
        o, o2, ix, v = [], [], [], []
        for s in range(seeds):
            st = nf.datasets.ranking_stream(n_rounds=rounds, seed=s, examination=None)
            o.append(ours(st, rounds, flips, s)["regret"])
            o2.append(ours(st, rounds, flips, s, item_norm="unit")["regret"])
            ix.append(index_regret(st, rounds, flips, s))
            if vw:
                v.append(vw_squarecb(st, rounds, flips, s, [best_cfg], workdir)[best_cfg][0])
            print(f"  churn {flips} seed {s}: ours {o[-1]:.4f} / {o2[-1]:.4f} index {ix[-1]:.4f} "
                  f"VW {v[-1] if v else '-'}",
                  file=sys.stderr, flush=True)
        mo, mo2, mi = mean_se(o), mean_se(o2), mean_se(ix)
        mv = mean_se(v) if v else None
        lines.append(f"| {flips} | {fmt(mo)} | {fmt(mo2)} | {fmt(mi)} | "
                     + (f"{fmt(mv)} ({_label(best_cfg)})" if mv else ("VW not run" if SKIP_VW else "VW not installed"))
                     + f" | {mo[0] / mi[0]:.3f} | " + (f"{mo[0] / mv[0]:.3f} | {mo2[0] / mv[0]:.3f}" if mv else " | ")
                     + f" | {grid_txt} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- multiclass
def multiclass(dataset: str, data_dir, rounds: int | None, seeds: int, workdir: Path, flips=(0.2, 0.4)) -> str:
    X, y = nf.datasets.load(dataset, split="train", data_dir=data_dir)
    K = int(y.max()) + 1
    rounds = X.shape[0] if rounds is None else rounds
    digits = 3 if X.shape[1] > 100 else 6  # MNIST's pixels (8-bit grey levels) need no more

    def stream_for(s):
        perm = np.random.default_rng(s).permutation(X.shape[0])
        return nf.datasets.multiclass_candidates(X[perm], y[perm], n_classes=K, k_min=min(5, K), p_label=0.9,
                                                 seed=s)

    vw = vw_available()
    grid_txt, best_cfg = "", None
    if vw:
        st = stream_for(TUNING_SEED)
        g = vw_squarecb(st, rounds, flips, TUNING_SEED, SQUARECB_GRID, workdir, digits=digits)
        best_cfg = min(g, key=lambda k: g[k][1])
        grid_txt = "; ".join(f"{_label(k)} {v[1]:.4f}" for k, v in g.items())
    o, og, v = [], [], []
    for s in range(seeds):
        st = stream_for(s)
        r = ours(st, rounds, flips, s)
        o.append(r["regret"])  # the played error: regret is 1 exactly when a list with the label is missed
        og.append(r["greedy_error"])
        if vw:
            v.append(vw_squarecb(st, rounds, flips, s, [best_cfg], workdir, digits=digits)[best_cfg][1])
        print(f"  {dataset} seed {s}: ours played {o[-1]:.4f} greedy {og[-1]:.4f} VW {v[-1] if v else '-'}",
              file=sys.stderr, flush=True)
    mo, mv = mean_se(o), (mean_se(v) if v else None)
    return (f"| {dataset} ({X.shape[0]:,} rows, K = {K}) | {rounds:,} | {fmt(mo)} | {fmt(mean_se(og))} | "
            + (f"{fmt(mv)} ({_label(best_cfg)})" if mv else ("VW not run" if SKIP_VW else "VW not installed"))
            + " | " + (f"{mo[0] / mv[0]:.3f}" if mv else "") + f" | {grid_txt} |")


def multiclass_section(datasets, data_dir, rounds, seeds, workdir) -> str:
    lines = ["### Multiclass with changing candidate lists, flips (0.2, 0.4)", "",
             "Each class a candidate (one-hot item feature), 5 to K candidates a round, the label in the list "
             "with probability 0.9, the first rounds of the training split in a seeded order (all of it: one "
             "pass). Played error (the "
             f"same count for both), mean ± s.e. over seeds 0..{seeds - 1}; VW's configuration the best of "
             f"its grid on a separate order and candidate draw (seed {TUNING_SEED}).", "",
             "| data | rounds | CatalogueSquareCB played error | ours greedy error | VW squarecb played error, "
             "best | ours / VW | VW grid (tuning seed) |", "|---|---|---|---|---|---|---|"]
    for d in datasets:
        try:
            lines.append(multiclass(d, data_dir, rounds, seeds, workdir))
        except (FileNotFoundError, ValueError) as exc:
            lines.append(f"| {d} | not loaded ({exc}) | | | | | |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- slots
def uniform_pages(stream, rows: np.ndarray, k: int, flips, rng):
    """Uniformly random pages of k distinct candidates on the rounds ``rows``: positions (n, k), the slots'
    conditional probabilities (n, k), per-slot clicks (n, k) with the stream's examination, flipped."""
    r = stream.rounds
    ex = stream.examination_for(k)
    n = rows.shape[0]
    acts = np.empty((n, k), np.int64)
    probs = np.empty((n, k))
    f = np.empty((n, k), np.int64)
    for t, i in enumerate(rows):
        m = int(r.offsets[i + 1] - r.offsets[i])
        acts[t] = rng.permutation(m)[:k]
        probs[t] = 1.0 / (m - np.arange(k))
        clean = rng.random(k) < ex * stream.rewards[r.offsets[i] + acts[t]]
        u = rng.random(k)
        f[t] = np.where(clean, u >= flips[1], u < flips[0])
    return acts, probs, f


def page_clicks(stream, rows: np.ndarray, pages: np.ndarray) -> np.ndarray:
    ex = stream.examination_for(pages.shape[1])
    off = stream.rounds.offsets
    return np.array([float((ex * stream.rewards[off[i] + pages[t]]).sum()) for t, i in enumerate(rows)])


def write_ccb(path: Path, stream, rows, ctx, items, acts=None, probs=None, f=None, k: int = 3) -> None:
    """VW's CCB text of the rounds ``rows``: labelled slots (chosen:cost:probability, cost −1 for a click)
    when ``acts`` is given, else unlabelled slots."""
    off = stream.rounds.offsets
    with open(path, "a") as fh:
        for t, i in enumerate(rows):
            out = [f"ccb shared |s {ctx[i]}\n"]
            out += [f"ccb action |a {items[r]}\n" for r in range(off[i], off[i + 1])]
            for j in range(k):
                lab = f"{int(acts[t, j])}:{-int(f[t, j])}:{float(probs[t, j])!r} " if acts is not None else ""
                out.append(f"ccb slot {lab}|\n")
            fh.write("".join(out) + "\n")


def vw_ccb_pages(pred: Path, n_test: int, n_train: int, k: int) -> np.ndarray:
    """The first action listed for each slot (VW's choice) of the last n_test examples of a CCB ``-p`` file."""
    blocks = [b for b in pred.read_text().split("\n\n") if b.strip()]
    if len(blocks) != n_train + n_test:
        raise RuntimeError(f"VW wrote {len(blocks)} CCB predictions for {n_train + n_test} examples")
    pages = np.empty((n_test, k), np.int64)
    for t, b in enumerate(blocks[n_train:]):
        slots = b.strip().split("\n")
        pages[t] = [int(s.split(",")[0].split(":")[0]) for s in slots[:k]]
    return pages


def slots(rounds: int, seeds: int, workdir: Path, flips=(0.0, 0.0), k: int = 3) -> str:
    from scipy.stats import spearmanr

    vw = vw_available()
    n_train = int(0.9 * rounds)

    def one(s: int, grid):
        st = nf.datasets.ranking_stream(n_rounds=rounds, seed=s, examination=EXAMINATION)
        train, test = np.arange(n_train), np.arange(n_train, rounds)
        acts, probs, f = uniform_pages(st, train, k, flips, np.random.default_rng([s, 11]))
        res = {"uniform": float(page_clicks(st, test, np.array([np.arange(k)] * test.shape[0])).mean())}
        best = np.array([np.sort(st.rewards[st.rounds.candidates(i)])[::-1][:k] for i in test])
        res["best"] = float((best * np.asarray(EXAMINATION)).sum(axis=1).mean())
        L = nf.CatalogueSquareCB(n_slots=k, seed=s)
        L.learn(st.take(train).rounds, acts, f, probs)
        tst = st.take(test)
        res["ours"] = float(page_clicks(st, test, L.predict(tst.rounds)).mean())
        v = L.decision_function(tst.rounds)
        res["rho"] = float(np.mean([spearmanr(v[tst.rounds.candidates(i)],
                                              tst.rewards[tst.rounds.candidates(i)])[0]
                                    for i in range(tst.n_rounds)]))
        res["exam"] = L.examination_estimates().round(3).tolist()
        L2 = nf.CatalogueSquareCB(n_slots=k, seed=s, item_norm="unit")
        L2.learn(st.take(train).rounds, acts, f, probs)
        res["ours_raw"] = float(page_clicks(st, test, L2.predict(tst.rounds)).mean())
        if grid:
            ctx = _row_strings(st.rounds.context)
            items = _row_strings(st.rounds.items)
            path, pred = workdir / f"ccb_{s}.txt", workdir / f"ccb_{s}.pred"
            path.unlink(missing_ok=True)
            write_ccb(path, st, train, ctx, items, acts, probs, f, k)
            write_ccb(path, st, test, ctx, items, k=k)
            res["vw"] = {}
            for lr in grid:
                run_vw(f"--ccb_explore_adf --epsilon 0 -l {lr} -q sa --quiet --random_seed {s} -d {path} -p {pred}")
                pages = vw_ccb_pages(pred, test.shape[0], n_train, k)
                res["vw"][lr] = float(page_clicks(st, test, pages).mean())
            path.unlink(missing_ok=True)
            pred.unlink(missing_ok=True)
        return res

    best_lr, grid_txt = None, ""
    if vw:
        g = one(TUNING_SEED, CCB_GRID)["vw"]
        best_lr = max(g, key=g.get)
        grid_txt = "; ".join(f"{_label(lr)} {c:.4f}" for lr, c in g.items())
    rs = []
    for s in range(seeds):
        rs.append(one(s, [best_lr] if vw else []))
        print(f"  slots seed {s}: {rs[-1]}", file=sys.stderr, flush=True)
    m = {key: mean_se([r[key] for r in rs]) for key in ("ours", "ours_raw", "rho", "uniform", "best")}
    mv = mean_se([r["vw"][best_lr] for r in rs]) if vw else None
    lines = [f"### Slots: 3 positions with position bias, learned from one logged file ({rounds:,} rounds)", "",
             f"Uniformly random pages on the first {n_train:,} rounds (examination {EXAMINATION}, flips {flips}); "
             f"expected clean clicks per page of each greedy page on the last {rounds - n_train:,} rounds "
             f"(new contexts and mostly new items), mean ± s.e. over seeds 0..{seeds - 1}. VW's learning rate: "
             f"best of {CCB_GRID} on a separate stream (seed {TUNING_SEED}). Spearman: ours' item scores against "
             "the true click probabilities, per round, averaged.", "",
             "| CatalogueSquareCB (n_slots=3, defaults) | ours, `item_norm=\"unit\"` | VW ccb_explore_adf, best "
             "| ours / VW | ours' Spearman | uniform page | best page | VW grid (tuning seed) |",
             "|---|---|---|---|---|---|---|---|",
             f"| {fmt(m['ours'])} | {fmt(m['ours_raw'])} | " + (f"{fmt(mv)} ({_label(best_lr)})" if mv else
                                                                ("VW not run" if SKIP_VW else "VW not installed"))
             + " | " + (f"{m['ours'][0] / mv[0]:.3f}" if mv else "") + f" | {fmt(m['rho'], 3)} | {fmt(m['uniform'])}"
             f" | {fmt(m['best'])} | {grid_txt} |", "",
             "Per seed (ours − VW, clicks per page): "
             + (", ".join(f"{r['ours'] - r['vw'][best_lr]:+.4f}" for r in rs) if vw else "—")
             + "; with `item_norm=\"unit\"`: "
             + (", ".join(f"{r['ours_raw'] - r['vw'][best_lr]:+.4f}" for r in rs) if vw else "—") + ". "
             "Ours' estimated examination factors (slot 1 = 1): "
             + "; ".join(f"seed {s}: {r['exam']}" for s, r in enumerate(rs)) + "."]
    return "\n".join(lines) + "\n"


def sections(data_dir, rounds: int = 200_000, seeds: int = 3, grid_rounds: int = 50_000,
             slot_rounds: int = 50_000, datasets=("letter", "mnist"), mc_rounds: int | None = None) -> str:
    """The Markdown of ``make bench``'s catalogue part (all three comparisons)."""
    work = Path(tempfile.mkdtemp(prefix="nf-catalogue-"))
    try:
        parts = ["## Catalogue learners against Vowpal Wabbit", "",
                 "`benchmarks/catalogue_peers.py`; VW reads each stream as a text file and runs its own loop "
                 "(how each comparison is set up: the script's docstring).", "",
                 churn(rounds, seeds, grid_rounds, work)]
        if data_dir:
            parts.append(multiclass_section(datasets, data_dir, mc_rounds, seeds, work))
        parts.append(slots(slot_rounds, seeds, work))
        return "\n".join(parts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("churn", "multiclass", "slots", "all"))
    ap.add_argument("--rounds", type=int, default=None, help="rounds (churn 200,000; slots 50,000; multiclass: "
                                                              "one pass)")
    ap.add_argument("--grid-rounds", type=int, default=50_000, help="rounds of VW's grid search (churn)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--dataset", action="append", help="multiclass data set (letter, mnist)")
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--flips", type=float, nargs=2, action="append", help="churn: flip rates (default both)")
    ap.add_argument("--ours-only", action="store_true", help="run ours (and the index baseline) only, not VW")
    args = ap.parse_args(argv)
    global SKIP_VW
    SKIP_VW = args.ours_only
    work = Path(tempfile.mkdtemp(prefix="nf-catalogue-"))
    try:
        if args.what == "churn":
            fl = [tuple(f) for f in args.flips] if args.flips else ((0.0, 0.0), (0.2, 0.3))
            print(churn(args.rounds or 200_000, args.seeds, args.grid_rounds, work, fl))
        elif args.what == "multiclass":
            print(multiclass_section(args.dataset or ["letter"], args.data_dir, args.rounds, args.seeds, work))
        elif args.what == "slots":
            print(slots(args.rounds or 50_000, args.seeds, work))
        else:
            print(sections(args.data_dir, args.rounds or 200_000, args.seeds, args.grid_rounds))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
