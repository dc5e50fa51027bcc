"""Figures and tables from a results table: pure functions returning matplotlib Figures / DataFrames.

- `learning_curves` — cumulative online error rate against rounds, one line per configuration
  (from Traces, `traces_to_frame`, or a frame of curves), mean over seeds with a band;
  `short_name` / `short_label` — the short labels of learners and channels;
- `learning_curve_figures` — per (dataset, channel): cumulative error vs rounds, log-log,
  mean over seeds with a band (drawn by `learning_curves`);
- `sweep_figure` / `sweep_figures` — final metric vs a parameter (e.g. the γ grid),
  mean ± std over seeds, one line per learner (each with its own dashes and markers,
  `line_style`, as the learning curves);
- `summary_table`, `bar_figure` — final metric per configuration (mean ± std);
- `selection_table` — chosen values of a ``[selection]`` run;
- `plot_results` — ``noisyfeedback plot results.parquet``: writes the PNGs;
- `new_figure` — the one figure factory of every report (panels in a grid, constrained layout),
  and `learner_color` / `color_picker` — one fixed colour per learner across every report.

Nothing here uses pyplot's global state (figures are `matplotlib.figure.Figure`).
"""


from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .plan import param_text
from .store import atomic_path, read_results

__all__ = [
    "learning_curves",
    "short_label",
    "short_name",
    "traces_to_frame",
    "line_style",
    "new_figure",
    "learner_color",
    "color_picker",
    "LEARNER_COLORS",
    "label_rows",
    "learning_curve_figures",
    "sweep_figure",
    "sweep_figures",
    "summary_table",
    "bar_figure",
    "selection_table",
    "plot_results",
    "save_figure",
]

# ------------------------------------------------------------ learning curves
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
    """``'Banditron γ=0.1, NoisyBandit(0.2,0.4)'`` for a `Trace`."""
    return f"{short_name(trace.learner)}, {short_name(trace.feedback, positional=True)}"


def traces_to_frame(traces, labels: str | Iterable[str] | None = None) -> pd.DataFrame:
    """One row per Trace: label, learner, feedback, seed, n_rounds, error_rate, mistakes,
    wall_time, checkpoints and curve (arrays) — the table `learning_curves` reads.

    ``labels``: one label for all traces, one per trace, or None for `short_label`.
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
        Traces are labelled with `short_label` unless ``labels`` is given.
        Runs sharing a label (e.g. several seeds) are drawn as their mean with a
        shaded band.
    ax : matplotlib Axes, optional
        Draw into it; otherwise a new `Figure` is made
        (no pyplot state involved).
    band : 'minmax', 'std' or None
        Band around the mean of several runs: min..max, mean ± one standard
        deviation, or none.
    colors : callable, optional
        ``label -> colour`` (e.g. `noisyfeedback.lab.figures.color_picker`'s, one fixed
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


# ------------------------------------------------------- results-table figures

#: one colour per learner in every report (a learner looks the same in each figure); keys are learner
#: names without "-" (``MC-DBF`` and ``MCDBF`` share one)
LEARNER_COLORS: dict[str, str] = {
    "Perceptron": "#7f7f7f", "Banditron": "#1f77b4", "RCNBF": "#d62728", "RCINE": "#ff7f0e", "BPA": "#9467bd",
    "SOBA": "#2ca02c", "MCDBF": "#17becf", "MCSLP": "#8c564b", "UMA": "#e377c2", "NLMS": "#bcbd22",
    "ORS": "#1f77b4", "SVM": "#7f7f7f", "EvilTeacherSVM": "#d62728", "TeacherSGD": "#2ca02c",
    "Pegasos": "#9467bd", "SquareCB": "#ff7f0e", "EpsilonGreedy": "#8c564b",
}
#: colours for a second line of the same learner in one figure (or a line that names no learner)
_SPARE_COLORS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
                 "#756bb1", "#636363")


def learner_color(label: str) -> str | None:
    """The fixed colour of the learner a line label starts with ("MC-DBF m=2 γ=0.2" -> MC-DBF's), or None."""
    first = str(label).split(" ", 1)[0].split("(", 1)[0].replace("-", "")
    return LEARNER_COLORS.get(first)


def color_picker():
    """A per-figure ``label -> colour``: the learner's fixed colour the first time it appears, then spare
    colours (so two lines of one figure never share a colour)."""
    used: set[str] = set()
    spare = iter(_SPARE_COLORS * 4)

    def pick(label: str) -> str:
        c = learner_color(label)
        if c is None or c in used:
            c = next(c for c in spare if c not in used)
        used.add(c)
        return c

    return pick


def new_figure(n_panels: int = 1, *, ncols: int | None = None, width: float = 6.8, height: float = 4.4):
    """``(figure, [axes])``: ``n_panels`` panels row by row, ``ncols`` a row (default: all in one row), each
    ``width`` × ``height`` inches, constrained layout (no pyplot state)."""
    n = max(int(n_panels), 1)
    cols = n if ncols is None else max(1, min(int(ncols), n))
    rows = -(-n // cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(n)]


def _report_rows(df: pd.DataFrame) -> pd.DataFrame:
    if "phase" in df.columns and (df["phase"] == "report").any():
        return df[df["phase"] == "report"]
    return df


def _param_cols(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("learner.")]


def _value(v: Any) -> Any:
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def label_rows(df: pd.DataFrame) -> pd.Series:
    """A line label per row: the learner, plus its parameters that vary within its (dataset, channel),
    plus the values chosen by a selection ("RCNBF γ=0.05 (tuned)")."""
    labels = pd.Series(df["learner"].astype(str).to_numpy(), index=df.index, dtype=object)
    cols = _param_cols(df)
    for _, g in df.groupby(["dataset", "channel", "learner"], sort=False):
        varying = [c for c in cols if g[c].dropna().astype(str).nunique() > 1]
        for idx, row in g.iterrows():
            params = {c[len("learner."):]: _value(row[c]) for c in varying}
            chosen = row.get("chosen") if "chosen" in g.columns else None
            tuned = bool(chosen) and isinstance(chosen, str)
            if tuned:
                params.update(json.loads(chosen))
            text = param_text({k: v for k, v in params.items() if v is not None})
            lab = f"{row['learner']} {text}".strip()
            if tuned and row.get("phase") == "report":
                lab += " (tuned)"
            labels[idx] = lab
    return labels


def learning_curve_figures(df: pd.DataFrame, band: str = "minmax") -> dict[tuple[str, str], Figure]:
    """One log-log learning-curve figure per (dataset, channel): mean over seeds with a band."""
    rows = _report_rows(df)
    out: dict[tuple[str, str], Figure] = {}
    if rows.empty:
        return out
    labels = label_rows(rows)
    for (ds, ch), g in rows.groupby(["dataset", "channel"], sort=False):
        frame = pd.DataFrame({"label": labels[g.index], "checkpoints": g["checkpoints"], "curve": g["curve"],
                              "seed": g["seed"]})
        n_seeds = g["seed"].nunique()
        what = "min–max" if band == "minmax" else "± 1 std"
        title = f"{ds}, {ch}" + (f" (mean and {what} over {n_seeds} seeds)" if n_seeds > 1 else "")
        out[(ds, ch)] = learning_curves(frame, title=title, band=band, colors=color_picker())
    return out


def sweep_figure(df: pd.DataFrame, param: str, metric: str = "error_rate", *, dataset: str | None = None,
                 channel: str | None = None, logx: bool | None = None, ax=None) -> Figure:
    """Final ``metric`` against a learner parameter (mean ± std over seeds), one line per learner.

    Uses the tuning rows of a selection run when there are any (the grid), else every row.
    """
    col = param if param.startswith("learner.") else f"learner.{param}"
    if col not in df.columns:
        raise ValueError(f"the results table has no parameter {param!r}; parameters: "
                         f"{', '.join(c[len('learner.'):] for c in _param_cols(df)) or '(none)'}")
    rows = df
    if "phase" in df.columns and (df["phase"] == "tuning").any():
        rows = df[df["phase"] == "tuning"]
    if dataset is not None:
        rows = rows[rows["dataset"] == dataset]
    if channel is not None:
        rows = rows[rows["channel"] == channel]
    rows = rows[rows[col].notna()]
    if rows.empty:
        raise ValueError(f"no rows with parameter {param!r} to plot.")
    if ax is None:
        fig = Figure(figsize=(6.5, 4.2), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    xs_all = []
    pick = color_picker()
    for i, (learner, g) in enumerate(rows.groupby("learner", sort=False)):
        stats = g.groupby(col, sort=True)[metric].agg(["mean", "std", "count"])
        x = stats.index.to_numpy(dtype=float)
        xs_all.extend(x)
        mean, std = stats["mean"].to_numpy(), np.nan_to_num(stats["std"].to_numpy())
        # distinct dashes and markers per learner: two learners with the same numbers stay visible
        (line,) = ax.plot(x, mean, label=str(learner), color=pick(str(learner)), **line_style(i, len(x)))
        if (stats["count"] > 1).any():
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2, lw=0)
        if "is_chosen" in g.columns and g["is_chosen"].fillna(False).astype(bool).any():
            cx = float(g.loc[g["is_chosen"].fillna(False).astype(bool), col].iloc[0])
            cy = float(stats.loc[stats.index == cx, "mean"].iloc[0])
            ax.plot([cx], [cy], marker="*", ms=14, color=line.get_color(), ls="none")
    xs = np.asarray(xs_all)
    if logx is None:
        logx = bool(xs.size and (xs > 0).all() and xs.max() / xs.min() >= 10)
    if logx:
        ax.set_xscale("log")
    grid = np.unique(xs)
    if 0 < grid.size <= 12:
        from matplotlib.ticker import NullFormatter

        ax.set_xticks(grid)
        ax.set_xticklabels([f"{v:g}" for v in grid])
        ax.xaxis.set_minor_formatter(NullFormatter())
    name = col[len("learner."):]
    ax.set_xlabel(param_text({name: 0}).split("=")[0])
    ax.set_ylabel(f"final {metric.replace('_', ' ')}")
    where = ", ".join(x for x in (dataset, channel) if x)
    ax.set_title(f"{metric.replace('_', ' ')} vs {name}" + (f": {where}" if where else "")
                 + (" (★ chosen)" if "is_chosen" in rows.columns and rows["is_chosen"].fillna(False).any() else ""))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def sweep_figures(df: pd.DataFrame, metric: str = "error_rate") -> dict[tuple[str, str, str], Figure]:
    """A `sweep_figure` per (dataset, channel, numeric parameter varying for some learner)."""
    rows = df
    if "phase" in df.columns and (df["phase"] == "tuning").any():
        rows = df[df["phase"] == "tuning"]
    out = {}
    for (ds, ch), g in rows.groupby(["dataset", "channel"], sort=False):
        for col in _param_cols(g):
            if not pd.api.types.is_numeric_dtype(g[col]) or pd.api.types.is_bool_dtype(g[col]):
                continue
            if any(h[col].dropna().nunique() > 1 for _, h in g.groupby("learner")):
                out[(ds, ch, col[len("learner."):])] = sweep_figure(g, col, metric, dataset=ds, channel=ch)
    return out


def summary_table(df: pd.DataFrame, metric: str = "error_rate", digits: int = 4) -> pd.DataFrame:
    """Final ``metric`` per (dataset, channel, configuration): mean ± std over seeds, min, max, seeds."""
    rows = _report_rows(df)
    if rows.empty:
        return pd.DataFrame(columns=["dataset", "channel", "configuration", "seeds", f"{metric} (mean ± std)"])
    labels = label_rows(rows)
    out = []
    for (ds, ch, lab), g in rows.assign(_label=labels).groupby(["dataset", "channel", "_label"], sort=False):
        v = g[metric].to_numpy(dtype=float)
        sd = v.std(ddof=1) if len(v) > 1 else 0.0
        out.append({"dataset": ds, "channel": ch, "configuration": lab, "seeds": len(v),
                    f"{metric} (mean ± std)": f"{v.mean():.{digits}f} ± {sd:.{digits}f}",
                    "mean": v.mean(), "std": sd, "min": v.min(), "max": v.max()})
    return pd.DataFrame(out)


def bar_figure(df: pd.DataFrame, metric: str = "error_rate") -> Figure:
    """Grouped bars: final ``metric`` (mean ± std over seeds) per configuration, grouped by (dataset, channel)."""
    table = summary_table(df, metric)
    if table.empty:
        raise ValueError("nothing to plot: the results table has no rows.")
    groups = list(dict.fromkeys(zip(table["dataset"], table["channel"])))
    configs = list(dict.fromkeys(table["configuration"]))
    fig = Figure(figsize=(max(5.0, 1.4 * len(groups) + 0.4 * len(configs)), 4.2), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / max(len(configs), 1)
    for i, cfg in enumerate(configs):
        xs, ys, es = [], [], []
        for j, grp in enumerate(groups):
            hit = table[(table["dataset"] == grp[0]) & (table["channel"] == grp[1]) & (table["configuration"] == cfg)]
            if len(hit):
                xs.append(j + (i - (len(configs) - 1) / 2) * width)
                ys.append(hit["mean"].iloc[0])
                es.append(hit["std"].iloc[0])
        ax.bar(xs, ys, width=width, yerr=es, capsize=3, label=cfg)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{d}\n{c}" for d, c in groups], fontsize="small")
    ax.set_ylabel(f"final {metric.replace('_', ' ')}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def selection_table(df: pd.DataFrame, metric: str = "error_rate") -> pd.DataFrame:
    """Per tuned (dataset, channel, learner): every candidate's mean tuning ``metric`` and the chosen one."""
    if "phase" not in df.columns or not (df["phase"] == "tuning").any():
        return pd.DataFrame(columns=["dataset", "channel", "learner", "chosen"])
    rows = df[df["phase"] == "tuning"]
    out = []
    for (ds, ch, le, chosen), g in rows.groupby(["dataset", "channel", "learner", "chosen"], sort=False):
        values = json.loads(chosen)
        cands = []
        for _, h in g.groupby(["learner." + k for k in values], sort=True):
            vals = {k: _value(h["learner." + k].iloc[0]) for k in values}
            cands.append(f"{param_text(vals)}: {h[metric].mean():.4f}")
        out.append({"dataset": ds, "channel": ch, "learner": le, "chosen": param_text(values),
                    f"tuning {metric} (mean over {g['seed'].nunique()} seeds)": "; ".join(cands)})
    return pd.DataFrame(out)


def _slug(*parts: str) -> str:
    s = "-".join(re.sub(r"[^A-Za-z0-9.]+", "-", str(p)).strip("-") for p in parts)
    return s.lower()[:120] or "figure"


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> Path:
    """Save a figure as PNG atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
    return path


def plot_results(results_path: str | os.PathLike, out_dir: str | os.PathLike | None = None) -> list[Path]:
    """Write PNGs for a results table: learning curves per (dataset, channel), and parameter sweeps
    where a learner parameter varies. Default ``out_dir``: ``plots/`` next to the table. Returns the paths."""
    results_path = Path(results_path)
    df = read_results(results_path)
    if df.empty:
        raise ValueError(f"{results_path} has no rows to plot.")
    base = results_path if results_path.is_dir() else results_path.parent
    out = Path(out_dir) if out_dir is not None else base / "plots"
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for (ds, ch), fig in learning_curve_figures(df).items():
        paths.append(save_figure(fig, out / f"curves-{_slug(ds, ch)}.png"))
    for (ds, ch, p), fig in sweep_figures(df).items():
        paths.append(save_figure(fig, out / f"sweep-{_slug(p, ds, ch)}.png"))
    return paths
