"""Off-policy estimates of a log of any size, chunk by chunk, on one machine or a Dask cluster.

`evaluate_log` reads the log with `noisyfeedback.datasets.stream_log` (Parquet or CSV: a
file, a directory, a glob, a list of files or a ``pyarrow.dataset.Dataset``; or an iterable of chunks)
and keeps running sums, never the rows: memory is one chunk whatever the log's size. The estimators are
those of `noisyfeedback.ope.evaluate` (module docstring of `noisyfeedback.ope.estimators`):

- IPS  V̂ = Σ w_i h(r_i) / n,  SNIPS V̂ = Σ w_i h(r_i) / Σ w_i,
- DM   V̂ = Σ_i Σ_a π(a|x_i) q̂(x_i, a) / n,  DR V̂ = DM + Σ_i w_i (h(r_i) − q̂(x_i, a_i)) / n.

**Sums.** Each chunk's sums are NumPy's (pairwise) sums of its terms; the chunks' sums are added with
``math.fsum`` (correctly rounded), so the result does not depend on the order in which chunks or
partitions arrive. A log of several files is read file by file (a chunk never spans two files), so the
chunks, and the estimate, are the same bits on one machine and on a Dask cluster (one task a file).

**Intervals** (one pass): ``"normal"`` (default; mean ± z·sd/√n from the running Σt and Σt², SNIPS by the
delta method from Σt², Σtw, Σw²: the same formula as the in-memory ``interval="normal"``),
``"bernstein"`` (Maurer & Pontil's empirical-Bernstein bound from Σt, Σt², min t and max t; for SNIPS
the range of the linearised terms is bounded by (max t − min t + |V̂|(max w − min w))/w̄: wider than the
in-memory range) or ``"none"``. DM returns no interval, as in memory (its error includes the reward
model's bias: `DM_NOTE`). The percentile bootstrap needs the rows in memory; the streamed
estimates do not offer it.

**Reward model (DM, DR).** A model passed in fitted (an object with ``predict(X) -> (n, K)`` or a
callable) is applied chunk by chunk in one pass. ``"ridge"`` is fitted here, cross-fitted on 2 folds
as in memory, from per-action sufficient statistics (n, Σx, Σxxᵀ, Σr of each action in each fold: the
closed-form ridge with an unpenalised intercept) in a first pass, then applied in a second: the log is
read twice (a source that can only be read once is refused). The folds are a seeded hash of the row's
place in the log (its file's index and its row in the file: `stream_folds`), not the in-memory
permutation, so the estimate equals the in-memory one given the same folds (not the same draw), and the
same log split into other files draws other folds.
Logistic reward models and sparse X are not streamed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .estimators import (
    Estimate,
    RewardModel,
    _check_log,
    _check_rho,
    _is_scalar,
    check_probabilities,
    noise_correct,
    normal_bounds,
    raw_probabilities,
)

__all__ = ["evaluate_log", "stream_folds", "StreamSums", "STREAM_INTERVALS"]

STREAM_INTERVALS = ("normal", "bernstein", "none")
_ESTIMATORS = ("ips", "snips", "dm", "dr")


# ------------------------------------------------------------------ folds
def stream_folds(seed: int | None, start: int, n: int, part: int = 0) -> np.ndarray:
    """The cross-fitting fold (0 or 1) of rows ``start`` .. ``start + n − 1`` of file ``part`` of a log
    (0 for a single file or a Dataset): bit 0 of SplitMix64 of the row number mixed with the seed and
    the file's index, so a row's fold depends on where it is in the log, not on the chunks or on
    which machine reads it."""
    mix = ((0 if seed is None else int(seed)) * 0x9E3779B97F4A7C15 + int(part) * 0xD1B54A32D192ED03) % (1 << 64)
    s = np.uint64(mix)
    with np.errstate(over="ignore"):
        z = np.arange(start, start + n, dtype=np.uint64) + s
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z & np.uint64(1)).astype(np.int64)


# ------------------------------------------------------------------- sums
#: a list of per-chunk sums longer than this is replaced by its exact expansion (`_compact`): memory bounded
#: whatever the number of chunks, the same final sums
COMPACT_AT = 64


def _expansion(values: list[float]) -> list[float]:
    """Shewchuk's non-overlapping partials of finite ``values`` (the ``msum`` recipe behind ``math.fsum``):
    a few floats whose exact sum is the exact sum of ``values``, so ``fsum(partials + more)`` is
    ``fsum(values + more)``, bit for bit (Shewchuk 1997, "Adaptive precision floating-point arithmetic")."""
    partials: list[float] = []
    for x in values:
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
    return partials


def _compact(parts: list) -> list:
    """``parts`` (floats, or arrays of one shape) as fewer parts with the same exact (element-wise) sum;
    unchanged when a part is not finite (``fsum`` gives inf or nan there, which an expansion cannot)."""
    stack = np.stack([np.asarray(p, dtype=np.float64) for p in parts])
    if not np.isfinite(stack).all():
        return parts
    flat = stack.reshape(stack.shape[0], -1)
    cols = [_expansion(flat[:, j].tolist()) for j in range(flat.shape[1])]
    out = np.zeros((max(len(c) for c in cols), flat.shape[1]))  # padded with zeros: the same sums
    for j, c in enumerate(cols):
        out[:len(c), j] = c
    if not np.isfinite(out).all():  # a partial past the float range: the parts kept (fsum says what it says of them)
        return parts
    if stack.ndim == 1:
        return out[:, 0].tolist()
    return [row.reshape(stack.shape[1:]) for row in out]


def _bounded(parts: list) -> list:
    """``parts``, compacted (`_compact`) once longer than `COMPACT_AT`."""
    return _compact(parts) if len(parts) > COMPACT_AT else parts


@dataclass
class StreamSums:
    """Running sums, mergeable: ``parts[name]`` holds each chunk's sum (added by ``math.fsum`` at the end,
    so the order of chunks does not matter; compacted to their exact expansion past `COMPACT_AT` chunks);
    ``lo``/``hi`` running minima and maxima."""

    parts: dict[str, list[float]] = field(default_factory=dict)
    lo: dict[str, float] = field(default_factory=dict)
    hi: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, values: np.ndarray) -> None:
        parts = self.parts.setdefault(name, [])
        parts.append(float(np.sum(values)))
        self.parts[name] = _bounded(parts)

    def add_range(self, name: str, values: np.ndarray) -> None:
        if values.size:
            self.lo[name] = min(self.lo.get(name, math.inf), float(values.min()))
            self.hi[name] = max(self.hi.get(name, -math.inf), float(values.max()))

    def merge(self, other: "StreamSums") -> "StreamSums":
        for k, v in other.parts.items():
            parts = self.parts.setdefault(k, [])
            parts.extend(v)
            self.parts[k] = _bounded(parts)
        for k, v in other.lo.items():
            self.lo[k] = min(self.lo.get(k, math.inf), v)
        for k, v in other.hi.items():
            self.hi[k] = max(self.hi.get(k, -math.inf), v)
        return self

    def total(self, name: str) -> float:
        return math.fsum(sorted(self.parts.get(name, [])))


# ------------------------------------------------------------- the sources
def _sources(log: Any, chunk_rows: int, format: str | None, options: dict):
    """(list of re-streamable units — each a zero-argument callable giving an iterator of chunks —,
    whether the log can be read more than once)."""
    from ..datasets.streams import BanditLog, is_arrow_dataset, log_files, stream_log

    if isinstance(log, BanditLog) or (isinstance(log, tuple) and len(log) == 4):
        X, a, r, p = log

        def whole():
            from ..datasets.streams import LogChunk

            n = np.asarray(a).shape[0]
            for lo in range(0, n, chunk_rows):
                hi = min(n, lo + chunk_rows)
                yield LogChunk(X[lo:hi], np.asarray(a)[lo:hi], np.asarray(r)[lo:hi], np.asarray(p)[lo:hi], None, lo)
        return [whole], True
    if is_arrow_dataset(log):
        return [lambda: stream_log(log, format=format, chunk_rows=chunk_rows, **options)], True
    if isinstance(log, (str, bytes)) or hasattr(log, "__fspath__") or (
            isinstance(log, (list, tuple)) and all(isinstance(s, str) or hasattr(s, "__fspath__") for s in log)):
        files = log_files(log)
        return [_file_unit(f, k, format, chunk_rows, options) for k, f in enumerate(files)], True
    if isinstance(log, Iterable):
        it = iter(log)
        return [lambda: it], False
    raise TypeError(f"log must be a path, a directory, a glob, a list of paths, a pyarrow Dataset, a BanditLog or "
                    f"an iterable of chunks; got {type(log).__name__}.")


def _file_unit(path: str, part: int, format: str | None, chunk_rows: int, options: dict):
    """File ``part`` of a log: its chunks (``start`` counts the file's rows), each marked with ``part``."""
    def unit():
        from ..datasets.streams import stream_log

        for ch in stream_log(path, format=format, chunk_rows=chunk_rows, **options):
            ch.part = part
            yield ch
    unit.path = path  # type: ignore[attr-defined]
    return unit


# --------------------------------------------------- the ridge reward model
def _ridge_stats(chunks: Iterator, seed, K: int | None) -> dict:
    """Per fold, per action: n, Σx, Σxxᵀ, Σr, Σxr (exact per chunk up to NumPy's sums); plus Σr and n of
    each fold. Every row's chunk offset ``start`` gives its fold."""
    stats: dict = {}
    for ch in chunks:
        X = ch.X
        if sp.issparse(X):
            raise ValueError("the streamed 'ridge' reward model takes dense X (a table); pass a fitted model.")
        X = np.asarray(X, dtype=np.float64)
        a = np.asarray(ch.actions, dtype=np.int64)
        r = np.asarray(ch.rewards, dtype=np.float64)
        fold = stream_folds(seed, int(ch.start), a.shape[0], getattr(ch, "part", 0))
        for f in (0, 1):
            sel_f = fold == f
            rf = r[sel_f]
            _acc(stats, ("all", f), {"n": np.array(float(rf.size)), "sr": np.array(rf.sum())})
            af = a[sel_f]
            Xf = X[sel_f]
            for k in np.unique(af):
                s = af == k
                Xk, rk = Xf[s], rf[s]
                _acc(stats, (int(k), f), {"n": np.array(float(s.sum())), "sx": Xk.sum(axis=0), "sxx": Xk.T @ Xk,
                                          "sr": np.array(rk.sum()), "sxr": Xk.T @ rk, "srr": np.array(rk @ rk)})
    return stats


def _acc(stats: dict, key, vals: dict) -> None:
    cur = stats.get(key)
    if cur is None:
        stats[key] = {k: [v] for k, v in vals.items()}
    else:
        for k, v in vals.items():
            cur[k].append(v)
            cur[k] = _bounded(cur[k])


def _merge_stats(a: dict, b: dict) -> dict:
    for key, vals in b.items():
        cur = a.setdefault(key, {k: [] for k in vals})
        for k, v in vals.items():
            cur[k].extend(v)
            cur[k] = _bounded(cur[k])
    return a


def _exact_sum(parts: list[np.ndarray]) -> np.ndarray:
    """Element-wise fsum of arrays of one shape (order-independent)."""
    stack = np.stack([np.asarray(p, dtype=np.float64) for p in parts])
    flat = stack.reshape(stack.shape[0], -1)
    return np.array([math.fsum(sorted(flat[:, j])) for j in range(flat.shape[1])]).reshape(stack.shape[1:])


@dataclass
class _FoldRidge:
    """The per-action ridge model fitted on one fold (the model's rows), as RewardModel('ridge') does:
    coef/intercept per action, or a constant (fewer than 2 rows: their mean; none: the fold's mean)."""

    coef: np.ndarray        # (K, d)
    intercept: np.ndarray   # (K,)
    linear: np.ndarray      # (K,) bool: a fitted ridge (else a constant in intercept)
    xm: np.ndarray          # (K, d) the action's mean x (linear only)
    Minv: list              # (d, d) inverse of Σ(x − x̄)(x − x̄)ᵀ + αI per action (linear only), else None
    n: np.ndarray           # (K,) rows of each action
    n_all: float
    mean_all: float

    def predict(self, X: np.ndarray) -> np.ndarray:
        return X @ self.coef.T + self.intercept


def _fit_fold(stats: dict, f: int, K: int, d: int, alpha: float) -> _FoldRidge:
    tot = stats.get(("all", f))
    n_all = float(_exact_sum(tot["n"])) if tot else 0.0
    mean_all = float(_exact_sum(tot["sr"])) / n_all if n_all else 0.0
    coef, icpt = np.zeros((K, d)), np.full(K, mean_all)
    linear, xm_all, n_k = np.zeros(K, bool), np.zeros((K, d)), np.zeros(K)
    Minv: list = [None] * K
    for k in range(K):
        st = stats.get((k, f))
        if st is None:
            continue
        n = float(_exact_sum(st["n"]))
        n_k[k] = n
        sr = float(_exact_sum(st["sr"]))
        if n < 2:
            icpt[k] = sr / n
            continue
        sx, sxx, sxr = _exact_sum(st["sx"]), _exact_sum(st["sxx"]), _exact_sum(st["sxr"])
        xm, ym = sx / n, sr / n
        M = sxx - n * np.outer(xm, xm) + alpha * np.eye(d)
        b = sxr - n * xm * ym
        Mi = np.linalg.inv(M)
        c = np.linalg.solve(M, b)
        coef[k], icpt[k], linear[k], xm_all[k], Minv[k] = c, ym - xm @ c, True, xm, Mi
    return _FoldRidge(coef, icpt, linear, xm_all, Minv, n_k, n_all, mean_all)


# ----------------------------------------------------------------- passes
#: rows a chunk of `evaluate_log` by default: a chunk holds about 20 arrays of its rows (the policy's and the
#: reward model's (n, K) values, weights, terms); at 65,536 rows the peak memory of a DR evaluation was 20 MB more
#: (the sums, and so the estimates, do not depend on the chunks to float tolerance)
EVALUATE_CHUNK_ROWS = 16384

#: rows of a chunk the policy is asked for at a time: a learner maps a block of rows to its features (e.g.
#: 45 degree-2 features a row), not the whole chunk (the rows' probabilities do not depend on the block)
POLICY_BLOCK_ROWS = 8192


def _policy_chunk(policy, X, n_actions):
    if isinstance(policy, np.ndarray):
        raise TypeError("a streamed log needs the policy as a learner or a callable X -> (n, K), not an array.")
    n = X.shape[0]
    blocks = []
    for lo in range(0, max(n, 1), POLICY_BLOCK_ROWS):  # (an empty chunk: one empty block)
        Xb = X[lo:lo + POLICY_BLOCK_ROWS]
        blocks.append(check_probabilities(raw_probabilities(policy, Xb), Xb.shape[0],
                                          n_actions if not blocks else blocks[0].shape[1], lo))
    return np.concatenate(blocks)


def _chunk_terms(ch, policy, n_actions, rho0, rho1, want_q: bool, models, seed, reward_model):
    """(P, a, w, hr, Q or None, fold or None) of one chunk, validated."""
    X = ch.X
    n = np.asarray(ch.actions).shape[0]
    try:
        P = _policy_chunk(policy, X, n_actions)
        K = P.shape[1]
        r0, r1 = _check_rho(rho0, rho1, K)
        noisy = bool(np.any(np.asarray(r0) != 0) or np.any(np.asarray(r1) != 0))
        a, r, p = _check_log(ch.actions, ch.rewards, ch.propensities, n, K, binary=noisy)
    except ValueError as e:
        raise ValueError(f"rows {ch.start}..{ch.start + n - 1} of the log: {e}") from None
    hr = noise_correct(r, r0, r1, actions=a) if noisy else r
    with np.errstate(over="ignore", invalid="ignore"):
        w = P[np.arange(n), a] / p
    bad = ~np.isfinite(w) | ~np.isfinite(w * hr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"propensities must be large enough for a finite importance weight π/p; row {ch.start + i} "
                         f"has propensity {float(p[i])!r} (weight {float(w[i])!r}).")
    Q = fold = None
    if want_q:
        if models is not None:
            Xd = np.asarray(X, dtype=np.float64)
            fold = stream_folds(seed, int(ch.start), n, getattr(ch, "part", 0))
            Q = np.empty((n, K))
            for f in (0, 1):  # fold f is predicted by the model fitted on the other fold
                s = fold == f
                if s.any():
                    Q[s] = models[1 - f].predict(Xd[s])
        elif hasattr(reward_model, "predict"):
            Q = np.asarray(reward_model.predict(X), dtype=np.float64)
        else:
            Q = np.asarray(reward_model(X), dtype=np.float64)
        if Q.shape != (n, K) or not np.isfinite(Q).all():
            raise ValueError(f"the reward model's predictions must be finite with shape ({n}, {K}); got {Q.shape}.")
        if noisy:
            Q = noise_correct(Q, r0, r1)
    return P, a, w, hr, Q, fold, (r0, r1, noisy)


def _sum_pass(units, policy, estimators, n_actions, rho0, rho1, models, seed, reward_model) -> StreamSums:
    s = StreamSums()
    want_q = "dm" in estimators or "dr" in estimators
    for unit in units:
        for ch in unit():
            _sum_chunk(s, ch, policy, estimators, n_actions, rho0, rho1, want_q, models, seed, reward_model)
    return s


def _sum_chunk(s, ch, policy, estimators, n_actions, rho0, rho1, want_q, models, seed, reward_model):
    P, a, w, hr, Q, fold, _ = _chunk_terms(ch, policy, n_actions, rho0, rho1, want_q, models, seed, reward_model)
    n = a.shape[0]
    if n == 0:
        return
    s.add("n", np.array(float(n)))
    s.add_range("K", np.array([float(P.shape[1])]))  # the policy's actions (the same in every chunk)
    t = w * hr
    s.add("ips", t)
    s.add("ips2", t * t)
    s.add_range("ips", t)
    if "snips" in estimators:
        s.add("w", w)
        s.add("w2", w * w)
        s.add("tw", t * w)
        s.add_range("w", w)
    if Q is not None:
        dm = (P * Q).sum(axis=1)
        s.add("dm", dm)
        s.add("dm2", dm * dm)
        s.add_range("dm", dm)
        dr = dm + w * (hr - Q[np.arange(n), a])
        s.add("dr", dr)
        s.add("dr2", dr * dr)
        s.add_range("dr", dr)


# --------------------------------------------------------------- the value
def _normal(value: float, var: float, n: int, alpha: float) -> tuple[float, float]:
    if n < 2:
        return -math.inf, math.inf
    return normal_bounds(value, math.sqrt(max(var, 0.0) / n), alpha)


def _bernstein(value: float, var: float, R: float, n: int, alpha: float) -> tuple[float, float]:
    if n < 2:
        return -math.inf, math.inf
    lg = math.log(4.0 / alpha)
    half = math.sqrt(2 * max(var, 0.0) * lg / n) + 7 * R * lg / (3 * (n - 1))
    return float(value - half), float(value + half)


def _estimates(s: StreamSums, estimators, interval: str, alpha: float, rates, note_dm: str) -> dict[str, Estimate]:
    n = int(round(s.total("n")))
    out = {}
    for e in estimators:
        note = ""
        kind = interval
        if e == "snips":
            S, W = s.total("ips"), s.total("w")
            value = S / W if W > 0 else 0.0
            wbar = W / n
            ss = s.total("ips2") - 2 * value * s.total("tw") + value * value * s.total("w2")
            var = ss / (n - 1) / (wbar * wbar) if n > 1 and wbar > 0 else 0.0
            R = ((s.hi["ips"] - s.lo["ips"]) + abs(value) * (s.hi["w"] - s.lo["w"])) / wbar if wbar > 0 else 0.0
        else:
            key = e
            value = s.total(key) / n
            sq = s.total(key + "2")
            R = s.hi[key] - s.lo[key]
            var = (sq - n * value * value) / (n - 1) if n > 1 else 0.0
            if e == "dm" and interval != "none":
                kind, note = "none", note_dm
        if kind == "normal":
            lo, hi = _normal(value, var, n, alpha)
        elif kind == "bernstein":
            lo, hi = _bernstein(value, var, R, n, alpha)
        else:
            lo, hi = value, value
        out[e] = Estimate(float(value), lo, hi, e, n, kind, float(alpha), *rates, note=note)
    return out


def evaluate_log(policy: Any, log: Any, estimators: tuple[str, ...] | str = ("ips", "snips", "dr"), *,
                 rho0: Any = 0.0, rho1: Any = 0.0, alpha: float = 0.05, seed: int | None = 0,
                 interval: str = "normal", reward_model: Any = "ridge", n_actions: int | None = None,
                 chunk_rows: int | None = None, scheduler: Any = None, format: str | None = None,
                 **options: Any) -> dict[str, Estimate]:
    """Estimate the value of ``policy`` on a log read chunk by chunk: estimator name -> Estimate.

    ``policy``: a learner (its ``action_probabilities(X)``) or a callable X -> (n, K); ``log``: a path,
    directory, glob or list of Parquet/CSV files, a ``pyarrow.dataset.Dataset``, a ``BanditLog`` or an
    iterable of chunks (read once: a fitted-here reward model is then refused); ``estimators``: any of
    "ips", "snips", "dm", "dr"; ``interval``: "normal", "bernstein" or "none" (module docstring);
    ``reward_model``: "ridge" (fitted here, cross-fitted, two or three passes) or a fitted model
    (``predict``) or callable; ``scheduler``: a Dask scheduler address (``"tcp://host:8786"``), Cluster
    or ``distributed.Client``: one task a file, the same estimate as here (same bits);
    ``chunk_rows``: rows a chunk (default 16,384); ``options``: the reader's (column names, ...)."""

    ests = (estimators,) if isinstance(estimators, str) else tuple(str(e).lower() for e in estimators)
    for e in ests:
        if e not in _ESTIMATORS:
            raise ValueError(f"The 'estimators' parameter of evaluate_log must hold names of {_ESTIMATORS}. "
                             f"Got {e!r} instead.")
    if interval not in STREAM_INTERVALS:
        raise ValueError(f"The 'interval' parameter of evaluate_log must be one of {STREAM_INTERVALS} (the "
                         f"bootstrap needs the rows in memory: nf.ope.evaluate). Got {interval!r} instead.")
    if not (isinstance(alpha, (float, int)) and 0 < alpha < 1):
        raise ValueError(f"The 'alpha' parameter of evaluate_log must be in (0, 1). Got {alpha!r} instead.")
    _check_rho(rho0, rho1)
    chunk_rows = EVALUATE_CHUNK_ROWS if chunk_rows is None else chunk_rows
    units, reusable = _sources(log, int(chunk_rows), format, options)
    want_q = "dm" in ests or "dr" in ests
    fit_here = want_q and isinstance(reward_model, (str, RewardModel))
    if fit_here:
        kind = reward_model if isinstance(reward_model, str) else reward_model.kind
        alpha_r = 1.0 if isinstance(reward_model, str) else float(reward_model.alpha)
        if kind != "ridge":
            raise ValueError(f"evaluate_log fits the 'ridge' reward model only; got {kind!r} (pass a fitted model).")
        if not reusable:
            raise ValueError("a reward model fitted here reads the log twice; give a path, a Dataset or a BanditLog, "
                             "or a fitted reward model.")
    elif want_q and not (hasattr(reward_model, "predict") or callable(reward_model)):
        raise TypeError("reward_model must be 'ridge', a RewardModel('ridge'), a fitted model with predict(X) or a "
                        f"callable; got {type(reward_model).__name__}.")
    run = _Runner(scheduler)
    try:
        models = None
        if fit_here:
            stats = run.map_reduce(_stats_task, units, (seed,), _merge_stats, {})
            d = _dimension(stats)
            K = n_actions if n_actions is not None else _n_actions(stats)
            models = [_fit_fold(stats, f, K, d, alpha_r) for f in (0, 1)]
        args = (policy, ests, n_actions, rho0, rho1, models, seed, reward_model)
        s = run.map_reduce(_sums_task, units, args, lambda x, y: x.merge(y), StreamSums())
        if "n" not in s.parts:
            raise ValueError("evaluate_log needs at least one logged row; got none.")
        K = int(s.hi["K"])
        if models is not None and K > len(models[0].n):  # the policy knows actions the log never played
            raise ValueError(f"the policy gives {K} actions; the log's actions stop at {len(models[0].n) - 1}: pass "
                             "n_actions.")
    finally:
        run.close()
    r0, r1 = _check_rho(rho0, rho1, K)
    per_action = not (_is_scalar(r0) and _is_scalar(r1))
    rates = ((tuple(float(v) for v in np.broadcast_to(r0, (K,))), tuple(float(v) for v in np.broadcast_to(r1, (K,))))
             if per_action else (float(r0), float(r1)))
    n = int(round(s.total("n")))
    if interval != "none" and n < 2:
        raise ValueError(f"evaluate_log: a {interval!r} interval needs at least 2 logged rows; got {n}.")
    # DM returns no interval, as in memory (its error includes the reward model's bias: DM_NOTE)
    from .estimators import DM_NOTE

    return _estimates(s, ests, interval, float(alpha), rates, DM_NOTE)


def _dimension(stats: dict) -> int:
    for key, v in stats.items():
        if key[0] != "all":
            return int(np.asarray(v["sx"][0]).shape[0])
    return 0


def _n_actions(stats: dict) -> int:
    ks = [key[0] for key in stats if key[0] != "all"]
    return max(ks) + 1 if ks else 1


# --------------------------------------------------------------- the tasks
def _stats_task(unit, seed):
    return _ridge_stats(unit(), seed, None)


def _sums_task(unit, policy, ests, n_actions, rho0, rho1, models, seed, reward_model):
    return _sum_pass([unit], policy, ests, n_actions, rho0, rho1, models, seed, reward_model)


class _Runner:
    """Runs a task on every unit (a file) here, or on a Dask cluster (one task a file), and reduces the
    results in the units' order (the reductions are order-independent anyway)."""

    def __init__(self, scheduler: Any):
        self.client, self._own = None, False
        if scheduler is None:
            return
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover
            raise ImportError("a Dask scheduler was given but dask.distributed is not installed: "
                              "pip install 'noisyfeedback[dask]'") from exc
        if isinstance(scheduler, Client):
            self.client = scheduler
        else:
            address = getattr(scheduler, "scheduler_address", scheduler)
            if not isinstance(address, str):
                raise TypeError(f"scheduler must be an address such as 'tcp://host:8786', a Cluster or a "
                                f"distributed.Client; got {type(scheduler).__name__}.")
            try:
                self.client = Client(address, set_as_default=False, timeout="30s")
            except (OSError, TimeoutError) as exc:
                raise OSError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
            self._own = True

    def map_reduce(self, task, units, args, merge, init):
        if self.client is None:
            acc = init
            for u in units:
                acc = merge(acc, task(u, *args))
            return acc
        if any(not hasattr(u, "path") for u in units):
            raise ValueError("a Dask scheduler evaluates a log of files (a path, a directory, a glob or a list); "
                             "got chunks in memory or a Dataset.")
        futures = self.client.map(task, units, *[[a] * len(units) for a in args], pure=False)
        acc = init
        for res in self.client.gather(futures):
            acc = merge(acc, res)
        return acc

    def close(self) -> None:
        if self._own and self.client is not None:
            self.client.close()


# ------------------------------------------------- nf.ope.evaluate on a log
def _is_log_source(X: Any) -> bool:
    """Whether ``X`` names a log to stream (a path, a list of paths, a Dataset, a BanditLog, chunks)."""
    import os

    if isinstance(X, (str, os.PathLike)) or hasattr(X, "actions"):
        return True
    if isinstance(X, (list, tuple)) and X and all(isinstance(s, (str, os.PathLike)) for s in X):
        return True
    if isinstance(X, np.ndarray) or sp.issparse(X) or hasattr(X, "shape") or X is None:
        return False
    return isinstance(X, Iterable)


def evaluate(policy: Any, X: Any, actions: Any = None, rewards: Any = None, propensities: Any = None,
             estimator: str = "ips", rho0: Any = 0.0, rho1: Any = 0.0, alpha: float = 0.05, seed: int | None = None,
             *, interval: str = "bootstrap", reward_model: Any = "ridge", n_actions: int | None = None,
             **stream: Any) -> Estimate:
    from .estimators import evaluate as _in_memory

    if actions is None and rewards is None and propensities is None and _is_log_source(X):
        kind = "normal" if interval == "bootstrap" else interval
        res = evaluate_log(policy, X, (str(estimator).lower(),), rho0=rho0, rho1=rho1, alpha=alpha,
                           seed=0 if seed is None else seed, interval=kind, reward_model=reward_model,
                           n_actions=n_actions, **stream)
        return res[str(estimator).lower()]
    if stream:
        raise TypeError(f"evaluate got unexpected keyword arguments {sorted(stream)} (they are for a log read "
                        "in chunks: X a path, a Dataset or chunks, with no actions, rewards, propensities).")
    return _in_memory(policy, X, actions, rewards, propensities, estimator, rho0, rho1, alpha, seed,
                      interval=interval, reward_model=reward_model, n_actions=n_actions)


def _evaluate_doc() -> str:
    from .estimators import evaluate as _in_memory

    return (_in_memory.__doc__ or "") + """
    Logs of any size
    ----------------
    With ``actions``, ``rewards`` and ``propensities`` left out, ``X`` is a log read chunk by chunk:
    a path, directory, glob or list of Parquet/CSV files, a ``pyarrow.dataset.Dataset``, a ``BanditLog``
    or an iterable of chunks (`evaluate_log`, bounded memory; a Dask ``scheduler=``, ``chunk_rows=``
    and the reader's options are passed on). Intervals are then one-pass: the default bootstrap is
    replaced by ``"normal"`` (``Estimate.interval`` says which).
    """


evaluate.__doc__ = _evaluate_doc()
