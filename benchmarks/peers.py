"""The peers of ``make bench``: Vowpal Wabbit, river and scikit-learn, run on the same data as ours.

Each function returns ``(examples_per_second, error, note)``; ``None`` for a peer that is
not installed (the ``bench`` extra), so the table says so instead of failing.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def _rows(X, i):
    if sp.issparse(X):
        a, b = X.indptr[i], X.indptr[i + 1]
        return X.indices[a:b], X.data[a:b]
    nz = np.flatnonzero(X[i])
    return nz, X[i, nz]


def write_vw_text(X, y, rows: np.ndarray, path: Path) -> None:
    """VW's text format, one line per round: ``label | j:x_j ...`` (labels 1..K, non-zeros only)."""
    with open(path, "w") as f:
        for i in rows:
            idx, val = _rows(X, int(i))
            f.write(f"{int(y[i]) + 1} | " + " ".join(f"{j}:{v:.9g}" for j, v in zip(idx.tolist(), val.tolist())))
            f.write("\n")


def vw_cbify(X, y, rows: np.ndarray, n_classes: int, epsilon: float, workdir: Path):
    """VW ``--cbify K --epsilon ε`` over the given rows, reading its text file, then its own cache.

    Returns a dict: text and cache rates (examples/s) and VW's average cbify loss (the share of
    rounds whose played action was wrong, exploration included).
    """
    try:
        import vowpalwabbit
    except ImportError:
        return None
    text = workdir / "bandit.vw"
    cache = workdir / "bandit.vw.cache"
    write_vw_text(X, y, rows, text)
    out = {}
    for mode, extra in (("text", ""), ("cache-write", f"--cache_file {cache}"), ("cache", f"--cache_file {cache}")):
        t0 = time.perf_counter()
        ws = vowpalwabbit.Workspace(f"--cbify {n_classes} --epsilon {epsilon} -d {text} {extra} --quiet")
        ws.run_parser()
        dt = time.perf_counter() - t0
        n = ws.get_weighted_examples()
        out[mode] = n / dt
        out["loss"] = ws.get_sum_loss() / max(n, 1)
        ws.finish()
    for p in (text, cache):
        p.unlink(missing_ok=True)
    out["n"] = len(rows)
    return out


def sklearn_perceptron_epoch(X, y, seed: int = 0):
    """scikit-learn ``Perceptron`` for one epoch (``max_iter=1``); error on the same rows after it."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Perceptron

    if sp.issparse(X):  # scikit-learn takes 32-bit CSR indices only (converted before timing)
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    clf = Perceptron(max_iter=1, tol=None, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        clf.fit(X, y)
        dt = time.perf_counter() - t0
    return X.shape[0] / dt, float(np.mean(clf.predict(X) != y))


def river_progressive(X, y, rows: np.ndarray):
    """river's multiclass per-example learner (``SoftmaxRegression``), predict-then-learn on each row."""
    try:
        from river import linear_model
    except ImportError:
        return None
    model = linear_model.SoftmaxRegression()
    feats = []
    for i in rows:  # dicts built before timing: river's input format, not its learning cost
        idx, val = _rows(X, int(i))
        feats.append(dict(zip(idx.tolist(), val.tolist())))
    mistakes = 0
    t0 = time.perf_counter()
    for x, i in zip(feats, rows):
        if model.predict_one(x) != int(y[i]):
            mistakes += 1
        model.learn_one(x, int(y[i]))
    dt = time.perf_counter() - t0
    return len(rows) / dt, mistakes / len(rows)


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="nf-bench-", dir=os.environ.get("TMPDIR")))


def vw_text_rows(X, rows: np.ndarray) -> list[str]:
    """VW feature text (``j:x_j`` of the non-zeros) of the given rows, built before timing."""
    out = []
    for i in rows:
        idx, val = _rows(X, int(i))
        out.append(" ".join(f"{j}:{v:.9g}" for j, v in zip(idx.tolist(), val.tolist())))
    return out


def vw_bandit(X, y, rows: np.ndarray, n_classes: int, rho0: float, rho1: float, mode: str, args: str,
              seed: int = 0):
    """Vowpal Wabbit as a contextual bandit, driven per example from Python on the same protocol as ours:
    for each row, VW's action distribution (its greedy action: the most probable one, scored against the
    true label before learning), an action drawn from it with our generator, the feedback 1[action = y]
    flipped with (rho0, rho1), and VW learns cost 1 − f̃ with the action's probability.

    ``mode`` "epsilon": ``--cb_explore K`` (one model per action over the context);
    "squarecb": ``--cb_explore_adf --squarecb`` (shared context namespace s, one action namespace a,
    ``-q sa``). ``args`` are extra VW flags (e.g. ``--epsilon 0.05 -l 0.5``).
    Returns (examples per second, online error of the greedy action) or None without VW.
    """
    try:
        import vowpalwabbit
    except ImportError:
        return None
    feats = vw_text_rows(X, rows)
    rng = np.random.default_rng(seed)
    u = rng.random((len(rows), 2))
    K = n_classes
    mistakes = 0
    if mode == "epsilon":
        ws = vowpalwabbit.Workspace(f"--cb_explore {K} {args} --quiet")
    else:
        ws = vowpalwabbit.Workspace(f"--cb_explore_adf --squarecb -q sa {args} --quiet")
        actions = [f"|a a{k}" for k in range(K)]
    t0 = time.perf_counter()
    for t, i in enumerate(rows):
        label = int(y[i])
        if mode == "epsilon":
            ex = "| " + feats[t]
            pmf = np.asarray(ws.predict(ex), dtype=np.float64)
        else:
            shared = "shared |s " + feats[t]
            pmf = np.asarray(ws.predict([shared] + actions), dtype=np.float64)
        mistakes += int(np.argmax(pmf)) != label
        a = min(int(np.searchsorted(np.cumsum(pmf / pmf.sum()), u[t, 0], side="right")), K - 1)
        f = 1 if a == label else 0
        ft = (1 if u[t, 1] >= rho1 else 0) if f == 1 else (1 if u[t, 1] < rho0 else 0)
        cost = 1.0 - ft
        if mode == "epsilon":
            ws.learn(f"{a + 1}:{cost}:{pmf[a]:.9g} " + ex)
        else:
            lines = [shared] + [f"0:{cost}:{pmf[a]:.9g} {actions[k]}" if k == a else actions[k] for k in range(K)]
            ws.learn(lines)
    dt = time.perf_counter() - t0
    ws.finish()
    return len(rows) / dt, mistakes / len(rows)
