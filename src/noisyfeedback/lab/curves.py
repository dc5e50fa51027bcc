"""Learning curves: cumulative online error rate against rounds, one line per configuration."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["learning_curves", "short_label", "short_name", "traces_to_frame"]

#: parameters left out of short names (they do not distinguish runs in a plot)
_DROP = ("n_classes", "seed")
#: parameter names written as symbols in short names
_SYMBOLS = {"gamma": "γ", "rho0": "ρ0", "rho1": "ρ1", "lam": "λ", "eps": "ε", "alpha": "α", "beta": "β"}
_CALL = re.compile(r"^\s*([A-Za-z_][\w.]*)\((.*)\)\s*$", re.S)
_BANDS = ("minmax", "std", None)


def _split_args(s: str) -> list[str]:
    """Split 'a=1, b=[1, 2], c=f(3, 4)' at top-level commas."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def short_name(text: str, positional: bool = False, drop: Iterable[str] = _DROP) -> str:
    """A compact name from a ``repr`` such as ``Banditron(n_classes=9, gamma=0.1, seed=0)``.

    Drops ``n_classes`` and ``seed`` and array-valued arguments; writes the rest as
    ``name γ=0.1`` or, with ``positional=True``, as ``Name(0.2,0.4)``. For a learner
    of this library the defaults its repr hides are shown for γ, ρ0, ρ1, λ, ε, α, β
    (``Banditron(n_classes=9)`` -> ``Banditron γ=0.1``). Text that is not a call is
    returned unchanged.

    >>> short_name("Banditron(n_classes=9, gamma=0.1, seed=0)")
    'Banditron γ=0.1'
    >>> short_name("NoisyBandit(rho0=0.2, rho1=0.4)", positional=True)
    'NoisyBandit(0.2,0.4)'
    >>> short_name("FullLabel()", positional=True)
    'FullLabel'
    """
    m = _CALL.match(str(text))
    if not m:
        return str(text)
    name, inner = m.group(1), m.group(2)
    drop = set(drop)
    kept: list[tuple[str | None, str]] = []
    for arg in _split_args(inner):
        key, sep, value = arg.partition("=")
        if not sep:
            key, value = None, arg
        key = key.strip() if key else None
        value = value.strip()
        if key in drop or "[" in value or value.startswith("array("):
            continue
        kept.append((key, value))
    if not positional:
        kept += _hidden_defaults(name, {k for k, _ in kept} | drop)
    if not kept:
        return name
    if positional:
        return f"{name}({','.join(v for _, v in kept)})"
    return " ".join([name] + [f"{_SYMBOLS.get(k, k)}={v}" if k else v for k, v in kept])


def _hidden_defaults(name: str, present: set) -> list[tuple[str, str]]:
    """Defaults of the symbol-named parameters (γ, ρ0, ...) that a learner's repr leaves out."""
    import inspect

    import noisyfeedback

    cls = getattr(noisyfeedback, name, None)
    if not isinstance(cls, type):
        return []
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return []
    return [
        (k, repr(p.default)) for k, p in params.items()
        if k in _SYMBOLS and k not in present and p.default is not p.empty
    ]


def short_label(trace) -> str:
    """``'Banditron γ=0.1, NoisyBandit(0.2,0.4)'`` for a :class:`~noisyfeedback.Trace`."""
    return f"{short_name(trace.learner)}, {short_name(trace.feedback, positional=True)}"


def traces_to_frame(traces, labels: str | Iterable[str] | None = None) -> pd.DataFrame:
    """One row per Trace: label, learner, feedback, seed, n_rounds, error_rate, mistakes,
    wall_time, checkpoints and curve (arrays) — the table :func:`learning_curves` reads.

    ``labels``: one label for all traces, one per trace, or None for :func:`short_label`.
    """
    traces = [traces] if hasattr(traces, "curve") else list(traces)
    if labels is None or isinstance(labels, str):
        labels = [labels or short_label(t) for t in traces]
    else:
        labels = list(labels)
        if len(labels) != len(traces):
            raise ValueError(f"labels has {len(labels)} entries for {len(traces)} traces.")
    rows = [
        {
            "label": lab,
            "learner": t.learner,
            "feedback": t.feedback,
            "seed": t.seed,
            "n_rounds": t.n_rounds,
            "error_rate": t.error_rate,
            "mistakes": t.mistakes,
            "wall_time": t.wall_time,
            "checkpoints": np.asarray(t.checkpoints),
            "curve": np.asarray(t.curve, dtype=float),
        }
        for lab, t in zip(labels, traces)
    ]
    return pd.DataFrame(rows, columns=None if rows else ["label", "checkpoints", "curve", "seed"])


# ---------------------------------------------------------------- grouping
def _groups(data, labels) -> list[tuple[str, list[tuple[np.ndarray, np.ndarray]]]]:
    """(label, [(checkpoints, curve), ...]) in order of first appearance."""
    if isinstance(data, pd.DataFrame):
        if labels is not None:
            raise TypeError("labels= applies to Traces; a table carries its labels in a 'label' column.")
        return _groups_from_frame(data)
    if hasattr(data, "curve"):
        data = [data]
    if isinstance(data, Mapping):
        items = []
        for lab, value in data.items():
            runs = [value] if hasattr(value, "curve") else list(value)
            items.extend((str(lab), t) for t in runs)
    else:
        runs = list(data)
        if labels is None or isinstance(labels, str):
            labs = [labels or short_label(t) for t in runs]
        else:
            labs = [str(x) for x in labels]
            if len(labs) != len(runs):
                raise ValueError(f"labels has {len(labs)} entries for {len(runs)} traces.")
        items = list(zip(labs, runs))
    out: dict[str, list] = {}
    for lab, t in items:
        if not hasattr(t, "curve") or not hasattr(t, "checkpoints"):
            raise TypeError(f"expected Trace objects; got {type(t).__name__}.")
        out.setdefault(lab, []).append((np.asarray(t.checkpoints), np.asarray(t.curve, dtype=float)))
    return list(out.items())


def _groups_from_frame(df: pd.DataFrame):
    missing = [c for c in ("checkpoints", "curve") if c not in df.columns]
    if missing:
        raise ValueError(f"the results table lacks column(s) {missing}; it has {list(df.columns)}.")
    if "label" in df.columns:
        labels = df["label"].astype(str)
    elif "learner" in df.columns:
        labels = df["learner"].map(lambda s: short_name(str(s)))
        if "feedback" in df.columns:
            labels = labels + ", " + df["feedback"].map(lambda s: short_name(str(s), positional=True))
    else:
        raise ValueError("the results table needs a 'label' or a 'learner' column to name its lines.")
    if "dataset" in df.columns and df["dataset"].nunique() > 1:
        labels = df["dataset"].astype(str) + ": " + labels
    out: dict[str, list] = {}
    for lab, cps, curve in zip(labels, df["checkpoints"], df["curve"]):
        out.setdefault(lab, []).append((np.asarray(cps), np.asarray(curve, dtype=float)))
    return list(out.items())


def _aggregate(runs: list[tuple[np.ndarray, np.ndarray]]):
    """(x, mean, low, high, std) over runs; differing checkpoint grids are interpolated (log x)."""
    for cps, curve in runs:
        if cps.shape != curve.shape or cps.ndim != 1 or cps.size == 0:
            raise ValueError(f"checkpoints and curve must be 1-D of equal length; got {cps.shape} and {curve.shape}.")
    x = runs[0][0].astype(float)
    if all(np.array_equal(runs[0][0], c) for c, _ in runs[1:]):
        ys = np.vstack([cv for _, cv in runs])
    else:
        lo = max(float(c[0]) for c, _ in runs)
        hi = min(float(c[-1]) for c, _ in runs)
        if lo > hi:
            raise ValueError("runs with the same label cover disjoint ranges of rounds.")
        x = np.unique(np.concatenate([c for c, _ in runs]).astype(float))
        x = x[(x >= lo) & (x <= hi)]
        ys = np.vstack([np.interp(np.log(x), np.log(c.astype(float)), cv) for c, cv in runs])
    return x, ys.mean(axis=0), ys.min(axis=0), ys.max(axis=0), ys.std(axis=0)


def _positive(a: np.ndarray) -> np.ndarray:
    return np.where(a > 0, a, np.nan)


# ------------------------------------------------------------------- plot
#: line styles and markers cycled over the lines of a plot, so that two learners whose curves coincide
#: stay visible: a later line is drawn thinner, dashed and on top of an earlier one
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "x")


def line_style(i: int, n_points: int) -> dict:
    """Matplotlib keywords of the i-th line: its line style, width, marker (about 8 per line) and z-order.

    >>> line_style(1, 100)["linestyle"], line_style(4, 100)["linestyle"]
    ('--', '-')
    """
    return {"linestyle": LINE_STYLES[i % len(LINE_STYLES)], "lw": max(2.4 - 0.4 * i, 1.2),
            "marker": MARKERS[i % len(MARKERS)], "markevery": max(n_points // 8, 1), "ms": 4,
            "markerfacecolor": "none", "zorder": 2 + i}


def learning_curves(
    data,
    ax: Axes | None = None,
    *,
    logx: bool = True,
    logy: bool = True,
    title: str | None = "Cumulative online error rate",
    labels: str | Iterable[str] | None = None,
    band: str | None = "minmax",
    xlabel: str = "rounds",
    ylabel: str = "cumulative online error rate",
    legend: bool = True,
    figsize: tuple[float, float] = (7.0, 4.5),
    colors=None,
) -> Figure:
    """Plot cumulative online error rate against rounds, one line per configuration.

    Parameters
    ----------
    data : Trace, list of Traces, dict {label: Trace or list of Traces}, or DataFrame
        A DataFrame needs columns ``checkpoints`` and ``curve`` (array-likes per
        row) and ``label`` (or ``learner`` [+ ``feedback``] reprs, shortened).
        Traces are labelled with :func:`short_label` unless ``labels`` is given.
        Runs sharing a label (e.g. several seeds) are drawn as their mean with a
        shaded band.
    ax : matplotlib Axes, optional
        Draw into it; otherwise a new :class:`~matplotlib.figure.Figure` is made
        (no pyplot state involved).
    band : 'minmax', 'std' or None
        Band around the mean of several runs: min..max, mean ± one standard
        deviation, or none.
    colors : callable, optional
        ``label -> colour`` (e.g. :func:`noisyfeedback.experiments.figures.color_picker`'s, one fixed
        colour per learner); default: matplotlib's colour cycle.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (one Line2D per label).

    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame({"label": ["a", "a", "b"], "seed": [0, 1, 0],
    ...                    "checkpoints": [np.array([1, 10, 100])] * 3,
    ...                    "curve": [np.array([1, .5, .1]), np.array([1, .3, .2]), np.array([0, .2, .3])]})
    >>> fig = learning_curves(df)
    >>> len(fig.axes[0].get_lines())
    2
    """
    if band not in _BANDS:
        raise ValueError(f"band must be one of {_BANDS}; got {band!r}.")
    groups = _groups(data, labels)
    if not groups:
        raise ValueError("nothing to plot: no runs given.")
    if ax is None:
        fig = Figure(figsize=figsize, layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    for i, (lab, runs) in enumerate(groups):
        x, mean, low, high, std = _aggregate(runs)
        n = len(runs)
        text = lab if n == 1 else f"{lab} (mean of {n})"
        y = _positive(mean) if logy else mean
        style = line_style(i, len(x))
        if colors is not None:
            style["color"] = colors(lab)
        (line,) = ax.plot(x, y, label=text, **style)
        if n > 1 and band is not None:
            lo, hi = (low, high) if band == "minmax" else (mean - std, mean + std)
            if logy:
                lo, hi = _positive(lo), _positive(hi)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        ax.legend(fontsize="small", loc="best")
    return fig
