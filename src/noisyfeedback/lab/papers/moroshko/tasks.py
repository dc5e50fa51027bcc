"""moroshko's protocol (the variants, strategies, noise schedules and seeds) and its task kind, ``moroshko.work``:
a pure function of a task (tune one method on its grid, run its report seeds, or trace a self-tuned run)."""

from __future__ import annotations

import functools
import json
from typing import Any, Callable

import numpy as np

from ...engine import task_kind
from ...grids import next_value

#: the variants of Section 4.1: name -> (learner class, parameters, flags)
VARIANTS: dict[str, dict[str, Any]] = {
    "clean feedback": {"cls": "NLMS", "params": {}, "clean": True},
    "noisy feedback": {"cls": "NLMS", "params": {}},
    "beta": {"cls": "ORS", "params": {"scaling": "beta"}, "tune_beta": True},
    "opt": {"cls": "ORS", "params": {"scaling": "opt"}},
    "one sample": {"cls": "ORS", "params": {"scaling": "one_sample"}},
    "one sample and pred": {"cls": "ORS", "params": {"scaling": "one_sample_pred", "variance": "known"}},
    "two samples": {"cls": "ORS", "params": {"scaling": "two_samples", "variance": "known"}},
    "one sample and pred (unknown v)": {"cls": "ORS", "params": {"scaling": "one_sample_pred",
                                                                 "variance": "unknown"}},
    "two samples (unknown v)": {"cls": "ORS", "params": {"scaling": "two_samples", "variance": "unknown"}},
}

#: the left (known variance) and right (unknown variance) panels of Figures 2, 4 and 5
KNOWN_PANEL = ["clean feedback", "noisy feedback", "beta", "opt", "one sample", "one sample and pred", "two samples"]

UNKNOWN_PANEL = ["clean feedback", "noisy feedback", "one sample and pred (unknown v)", "two samples (unknown v)"]

STRATEGIES = ["const", "begin", "auto", "auto_self_tuned"]

SCHEDULES = ["uniform", "increasing", "decreasing"]

#: the two update rules of Section 4.2: "scaling" (eq. (5), one sample and pred / sample variance) and "no scaling"
BUDGET_RULES = {"scaling": "one_sample_pred", "no scaling": "none"}

#: seeds of the separate tuning sequence (data, noise, simulation, learner); report seeds are 0, 1, ...
TUNE_DATA_SEED, TUNE_NOISE_SEED, TUNE_SIM_SEED = 999, 998, 997

#: noise seed of report seed s: NOISE_SEED_OFFSET + s
NOISE_SEED_OFFSET = 1000

#: the late window: the MSE over the last LATE_FRACTION of the rounds
LATE_FRACTION = 0.2

#: rounds between two records of Figure 7 (auto_self_tuned adjusts a every 100 rounds)
TRACE_BLOCK = 100


# ================================================================ worker side
@functools.lru_cache(maxsize=2)
def _load(key: str) -> tuple[np.ndarray, np.ndarray]:
    from ....datasets.regression import channel_equalization, ors_synthetic, speech_substitute

    spec = json.loads(key)
    kind = spec["kind"]
    if kind == "synthetic":
        X, y = ors_synthetic(n_samples=spec["n_samples"], seed=spec["seed"])
    elif kind == "channel":
        X, y = channel_equalization(n_samples=spec["n_samples"], seed=spec["seed"])
    elif kind == "speech":
        X, y = speech_substitute(n_samples=spec["n_samples"], n_taps=spec["n_taps"],
                                 room_length=spec["room_length"], seed=spec["seed"])
    else:
        raise ValueError(f"unknown data kind {kind!r}")
    return X, y


def dataset(spec: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a data spec ({"kind", "seed", "n_samples", ..., optional "rows": [start, stop]}), cached."""
    base = {k: v for k, v in spec.items() if k != "rows"}
    X, y = _load(json.dumps(base, sort_keys=True))
    if "rows" in spec:
        a, b = spec["rows"]
        return X[a:b], y[a:b]
    return X, y


def noise_channel(spec: dict[str, Any], n_rounds: int):
    """The GaussianNoise of a noise spec: clean, uniform (M, seed), increasing / decreasing (M), hammer (seed)."""
    from ....datasets.regression import hammer_variance
    from ....feedback import GaussianNoise

    kind = spec["kind"]
    if kind == "clean":
        return GaussianNoise(0.0)
    if kind == "uniform":
        return GaussianNoise.uniform(spec["M"], n_rounds, seed=spec["seed"])
    if kind == "increasing":
        return GaussianNoise.increasing(spec["M"], n_rounds)
    if kind == "decreasing":
        return GaussianNoise.decreasing(spec["M"], n_rounds)
    if kind == "hammer":
        return GaussianNoise(hammer_variance(n_rounds, peak=spec["peak"], floor=spec["floor"], seed=spec["seed"]))
    raise ValueError(f"unknown noise kind {kind!r}")


def make_learner(spec: dict[str, Any]):
    """NLMS or ORS from {"cls", "params"}."""
    import noisyfeedback as nf

    return getattr(nf, spec["cls"])(**spec["params"])


def _checkpoints(n_rounds: int, n: int) -> np.ndarray:
    """Log-spaced round counts that include the start of the late window and n_rounds."""
    from ....simulate import log_checkpoints

    late = n_rounds - int(round(LATE_FRACTION * n_rounds))
    return np.unique(np.concatenate([log_checkpoints(n_rounds, n), [max(1, late), n_rounds]]))


def late_mse(checkpoints, curve, fraction: float = LATE_FRACTION) -> float:
    """MSE over the last ``fraction`` of the rounds, from a cumulative curve (needs its start as a checkpoint).

    >>> late_mse([1, 8, 10], [4.0, 2.0, 1.7])
    0.5
    """
    cps = np.asarray(checkpoints, dtype=float)
    cur = np.asarray(curve, dtype=float)
    T = cps[-1]
    s = T - round(fraction * T)
    i = int(np.searchsorted(cps, s, side="right")) - 1
    if i < 0 or cps[i] >= T:
        return float(cur[-1])
    return float((cur[-1] * T - cur[i] * cps[i]) / (T - cps[i]))


def run_one(data: dict, noise: dict, learner: dict, sim_seed: int, n_checkpoints: int) -> dict[str, Any]:
    """One ``nf.simulate`` run over every row of ``data`` in order; the numbers a report needs."""
    from ....simulate import simulate

    X, y = dataset(data)
    n = y.shape[0]
    cps = _checkpoints(n, n_checkpoints)
    t = simulate(make_learner(learner), X, y, noise_channel(noise, n), n_rounds=n, seed=sim_seed,
                 checkpoints=cps, shuffle=False)
    labels_so_far = t.metrics["labels_curve"] * cps
    return {"mse": float(t.mse), "late_mse": late_mse(cps, t.curve), "checkpoints": cps.tolist(),
            "curve": t.curve.tolist(), "labels_rate": float(t.metrics["labels_rate"]),
            "labels_curve": t.metrics["labels_curve"].tolist(),
            "max_labels_per_round": float(np.max(labels_so_far / cps))}


def _with(learner: dict, **params) -> dict:
    return {"cls": learner["cls"], "params": {**learner["params"], **params}}


def find_a(data: dict, noise: dict, learner: dict, budget: float, steps: int, sim_seed: int) -> tuple[float, float]:
    """'auto': the a (bisection on log2 a in [-20, 20]) whose spend on this sequence is at most B and closest
    to it (the paper tunes a by hand so the total is close to B·n). Returns (a, spend)."""
    lo, hi = -20.0, 20.0  # a larger a stays with one label more often: fewer labels
    spend_hi = run_one(data, noise, _with(learner, a=2.0 ** hi), sim_seed, 2)["labels_rate"]
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        sp = run_one(data, noise, _with(learner, a=2.0 ** mid), sim_seed, 2)["labels_rate"]
        if sp > budget:
            lo = mid
        else:
            hi, spend_hi = mid, sp
    return 2.0 ** hi, spend_hi


def self_tuned_trace(data: dict, noise: dict, learner: dict, sim_seed: int, block: int = TRACE_BLOCK) -> dict:
    """Figure 7: run an ``auto_self_tuned`` ORS with ``learn`` in blocks of ``block`` rows, in order, with
    the noisy labels ``nf.simulate(..., shuffle=False, seed=sim_seed)`` would draw (so it is that
    simulation, bit for bit); record the instantaneous budget (labels so far / rounds so far) and a
    after every block."""
    from ....simulate import simulation_streams

    X, y = dataset(data)
    n = y.shape[0]
    ch = noise_channel(noise, n)
    L = make_learner(learner)
    _, rng_feedback, _ = simulation_streams(sim_seed)
    k = L.labels_per_round
    rounds, spend, a = [], [], []
    for start in range(0, n, block):
        stop = min(n, start + block)
        idx = np.arange(start, stop)
        Y = ch.respond(y[start:stop], rng=rng_feedback, rounds=idx, n_samples=k)
        L.learn(X[start:stop], Y, variance=ch.variance_at(idx), y_clean=y[start:stop])
        rounds.append(int(L.rounds_))
        spend.append(L.labels_ / L.rounds_)
        a.append(float(L.a_))
    return {"rounds": rounds, "budget": spend, "a": a, "w": L.w_.tolist()}


# ------------------------------------------------ what we recommend instead: the peers
#: the regression peers, by name: (package, a factory of (d) -> an online model)
PEERS = ("padasip FilterRLS(mu=0.999)", "padasip FilterNLMS(mu=0.5)", "river LinearRegression")


def peers_available() -> list[str]:
    """The peers whose package is installed (padasip and river are in the optional extra ``bench``)."""
    import importlib.util

    return [p for p in PEERS if importlib.util.find_spec(p.split()[0]) is not None]


def run_peer(data: dict, noise: dict, peer: str, sim_seed: int, n_checkpoints: int) -> dict[str, Any]:
    """One peer, online over every row of ``data`` in order, predicting before it learns each round's noisy
    target — the noisy targets ``nf.simulate(..., shuffle=False, seed=sim_seed)`` draws (one label a round),
    so the stream is the paper's learners' own; the MSE against the clean targets, as ``simulate``'s."""
    from ....simulate import simulation_streams

    X, y = dataset(data)
    n, d = X.shape
    cps = _checkpoints(n, n_checkpoints)
    ch = noise_channel(noise, n)
    _, rng_feedback, _ = simulation_streams(sim_seed)
    Y = np.asarray(ch.respond(y, rng=rng_feedback, rounds=np.arange(n), n_samples=1), dtype=float).reshape(n, -1)[:, 0]
    pred = np.empty(n)
    if peer.startswith("padasip"):
        import padasip as pa

        # w="zeros": padasip starts from random weights (numpy's global state) by default
        f = pa.filters.FilterRLS(n=d, mu=0.999, w="zeros") if "RLS" in peer else \
            pa.filters.FilterNLMS(n=d, mu=0.5, w="zeros")
        for t in range(n):
            pred[t] = f.predict(X[t])
            f.adapt(Y[t], X[t])
    elif peer.startswith("river"):
        from river import linear_model

        m = linear_model.LinearRegression()
        keys = list(range(d))
        for t in range(n):
            x = dict(zip(keys, X[t].tolist()))
            pred[t] = m.predict_one(x)
            m.learn_one(x, float(Y[t]))
    else:
        raise ValueError(f"unknown peer {peer!r}; allowed: {', '.join(PEERS)}.")
    sq = np.cumsum((pred - y) ** 2)
    curve = sq[cps - 1] / cps
    return {"mse": float(curve[-1]), "late_mse": late_mse(cps, curve), "checkpoints": cps.tolist(),
            "curve": curve.tolist(), "labels_rate": 1.0}


# ------------------------------------------------ tuning: the paper's grid, extended past a binding edge
def _tune_row(task: dict, r: float, beta: float | None) -> dict:
    """One value of the grid on the tuning sequence: {r, (β), (a), mse, labels_rate}."""
    params = {"r": r} if beta is None else {"r": r, "beta": beta}
    if task.get("budget") is not None and task["learner"]["params"].get("strategy") == "auto":
        a, _ = find_a(task["data"], task["noise"], _with(task["learner"], **params), task["budget"],
                      task["a_steps"], TUNE_SIM_SEED)
        params["a"] = a
    res = run_one(task["data"], task["noise"], _with(task["learner"], **params), TUNE_SIM_SEED, 2)
    return {**params, "mse": res["mse"], "labels_rate": res["labels_rate"]}


def binding_side(values: list[float], chosen: float) -> str | None:
    """"low" or "high" when ``chosen`` sits on that edge of ``values`` (a one-value axis: "high"), else None."""
    lo, hi = min(values), max(values)
    if lo < chosen < hi:
        return None
    if lo == hi:
        return "high"
    return "low" if chosen == lo else "high"


def _step(grid: list[float]) -> float | None:
    """The geometric step of a log-spaced grid, (max/min)^(1/(n - 1)); None for a one-value grid."""
    lo, hi = min(grid), max(grid)
    return None if len(grid) < 2 or not hi > lo > 0 else (hi / lo) ** (1.0 / (len(grid) - 1))


def _next(values: list[float], side: str, factor: float | None) -> float | None:
    """The next value past ``side`` of ``values`` (> 0, geometric by ``factor``), to 6 significant digits as
    the paper's grid is written (so 10^-3 is 0.001, not 0.000999997)."""
    nxt = next_value(values, side, low=0.0, factor=factor)
    return None if nxt is None else float(f"{nxt:.6g}")


def tune_grid(evaluate: Callable[[float, float | None], dict], r_grid: list[float],
              beta_grid: list[float] | None, extend: int = 0) -> list[dict]:
    """The rows ``evaluate(r, β)`` of the paper's grid (r outer, β inner; ``beta_grid`` None: r alone), then
    past a binding edge: while the best row's r (or β) is an edge of every value of that axis tried, the next
    value past that edge (`next_value`: geometric by the paper's grid's step,
    kept > 0, to 6 significant digits), at most ``extend`` values per axis. A new value of one axis is tried with every
    value of the other axis tried so far (a whole line), so the values tried stay a full grid and each axis's
    edge is judged against all of them; r first, and the best is found again after each line. With
    ``extend`` > 0 every row carries ``paper_grid`` (whether it is on the paper's grid); with 0 the rows are
    exactly the paper's grid's.
    """
    axes: dict[str, list[float]] = {"r": list(r_grid)}
    if beta_grid is not None:
        axes["beta"] = list(beta_grid)

    def line(name: str, value: float) -> list[tuple[float, float | None]]:
        if name == "r":
            return [(value, b) for b in axes.get("beta", [None])]
        return [(r, value) for r in axes["r"]]

    rows = [evaluate(r, b) for r in axes["r"] for b in axes.get("beta", [None])]
    if extend <= 0:
        return rows
    for row in rows:
        row["paper_grid"] = True
    added = dict.fromkeys(axes, 0)
    factor = {name: _step(values) for name, values in axes.items()}
    while True:
        best = _best(rows)
        for name, values in axes.items():
            side = binding_side(values, best[name])
            nxt = None if side is None or added[name] >= extend else _next(values, side, factor[name])
            if nxt is None or nxt in values:
                continue
            rows += [{**evaluate(r, b), "paper_grid": False} for r, b in line(name, nxt)]
            values.append(nxt)
            added[name] += 1
            break
        else:
            return rows


def tune(task: dict) -> list[dict]:
    """A ``tune`` task: its rows on the tuning sequence (see `tune_grid`; ``extend``: values past a
    binding edge, per axis)."""
    return tune_grid(lambda r, b: _tune_row(task, r, b), task["r_grid"],
                     task["beta_grid"] if task.get("tune_beta") else None, int(task.get("extend", 0)))


@task_kind("moroshko.work")
def work(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task of the recipe (what the backends map over); returns {"key": ..., results}."""
    op = task["op"]
    out: dict[str, Any] = {"key": task["key"]}
    if op == "tune":
        out["grid"] = tune(task)
    elif op == "report":
        runs = []
        for run in task["runs"]:
            res = run_one(run["data"], run["noise"], run["learner"], run["sim_seed"], task["n_checkpoints"])
            runs.append({"seed": run["seed"], **res})
        out["runs"] = runs
    elif op == "peer":
        out["runs"] = [{"seed": run["seed"], **run_peer(run["data"], run["noise"], task["peer"], run["sim_seed"],
                                                         task["n_checkpoints"])} for run in task["runs"]]
    elif op == "trace":
        out.update(self_tuned_trace(task["data"], task["noise"], task["learner"], task["sim_seed"]))
    else:
        raise ValueError(f"unknown task {op!r}")
    return out


def _best(grid: list[dict]) -> dict:
    """The row of the lowest MSE over every value tried (the paper's grid and its extension; first of ties)."""
    return min(grid, key=lambda row: row["mse"])


def _paper_best(grid: list[dict]) -> dict:
    """The row of the lowest MSE on the paper's grid alone (rows without a ``paper_grid`` flag are on it)."""
    return _best([row for row in grid if row.get("paper_grid", True)])
