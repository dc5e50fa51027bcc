"""The ``noisyfeedback`` command line: thin — parse, call the library, print with rich.

Commands: ``datasets`` (the catalog), ``simulate`` (one run with a progress bar),
``run`` (a TOML experiment config: a resumable sweep), ``plot`` (figures from a
results table), ``reproduce`` (a paper's experiments and report) and ``demo``
(a Markdown + HTML report built from a list of demo parts: the bandit baselines,
then every paper recipe in quick mode).

Learners and feedback channels are looked up in two small registries,
:data:`LEARNERS` and :data:`FEEDBACKS` (name -> class or factory). A factory's
keyword parameters are read from its signature: the common flags (``--gamma``,
``--rho0``, ``--rho1``) reach every factory that accepts them, ``--param k=v``
sets any learner parameter and ``--feedback-param k=v`` any channel parameter.
Adding a learner is one entry::

    LEARNERS["rcnbf"] = nf.RCNBF        # RCNBF(n_classes, gamma, rho0, rho1, seed)

Its default channel follows its ``feedback_kind`` (see :data:`DEFAULT_FEEDBACK`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

import noisyfeedback as nf

__all__ = ["app", "LEARNERS", "FEEDBACKS", "DEFAULT_FEEDBACK", "DEMO_PARTS", "DEMO_DATASETS"]

# ------------------------------------------------------------- registries
#: learner name -> class or factory; called as factory(n_classes, **params)
LEARNERS: dict[str, Callable[..., Any]] = {
    "perceptron": nf.Perceptron,
    "banditron": nf.Banditron,
}

# Learners of SPEC §3 that plug in as soon as the library exports them.
for _name, _attr in [("rcnbf", "RCNBF"), ("rcine", "RCINE"), ("bpa", "BPA"), ("soba", "SOBA"),
                     ("mcslp", "MCSLP"), ("mcdbf", "MCDBF")]:
    if hasattr(nf, _attr):
        LEARNERS[_name] = getattr(nf, _attr)

#: feedback channel name -> class or factory; called with keyword params only
FEEDBACKS: dict[str, Callable[..., Any]] = {
    "full": nf.feedback.FullLabel,
    "noisy-bandit": nf.feedback.NoisyBandit,
    "bandit": functools.partial(nf.feedback.NoisyBandit, 0.0, 0.0),
    "diluted": nf.feedback.Diluted,
}

#: a learner's ``feedback_kind`` -> the channel used when --feedback is not given
DEFAULT_FEEDBACK = {"label": "full", "bandit": "noisy-bandit", "set": "diluted"}

#: parameters set by the common flags (never taken from a learner's --param for the channel)
_COMMON = ("gamma", "rho0", "rho1")

#: generated datasets, used only when the library has no ``nf.datasets.load``
GENERATORS: dict[str, Callable[..., Any]] = {
    "synsep": nf.datasets.synsep,
    "synnonsep": nf.datasets.synnonsep,
}

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

app = typer.Typer(
    name="noisyfeedback",
    help="Learning from imperfect feedback: simulate learners under noisy, bandit and diluted feedback.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


class CLIError(Exception):
    """An error to show as one red line (exit code 2)."""


#: exceptions from the library that are user errors, shown without a traceback
_USER_ERRORS = (CLIError, ValueError, TypeError, KeyError, FileNotFoundError, NotImplementedError, OSError)


@contextmanager
def _user_errors() -> Iterator[None]:
    try:
        yield
    except _USER_ERRORS as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        err_console.print(f"[bold red]Error:[/] [red]{escape(str(msg))}[/]", soft_wrap=True)
        raise typer.Exit(2) from None


# --------------------------------------------------------------- building
def parse_params(items: list[str] | None, flag: str = "--param") -> dict[str, Any]:
    """``["gamma=0.05", "seed=3", "scaling=opt"]`` -> {"gamma": 0.05, "seed": 3, "scaling": "opt"}.

    >>> parse_params(["gamma=0.05", "diag=true", "name=opt", "m=3"])
    {'gamma': 0.05, 'diag': True, 'name': 'opt', 'm': 3}
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise CLIError(f"{flag} takes NAME=VALUE (e.g. {flag} gamma=0.05); got {item!r}.")
        raw = raw.strip()
        words = {"true": True, "false": False, "none": None, "null": None}
        if raw.lower() in words:
            out[key] = words[raw.lower()]
            continue
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out


def _signature(factory: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool]:
    """(named keyword parameters, accepts **kwargs) of a class or factory."""
    sig = inspect.signature(factory)
    params = {
        n: p for n, p in sig.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    return params, any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _build(kind: str, name: str, factory, common: dict[str, Any], explicit: dict[str, Any], fixed: dict[str, Any]):
    """Call ``factory(**fixed, **accepted common flags, **explicit)``, checking names first."""
    params, var_kw = _signature(factory)
    unknown = [k for k in explicit if (k not in params and not var_kw) or k in fixed]
    if unknown:
        accepted = [p for p in params if p not in fixed] or ["(none)"]
        raise CLIError(
            f"{kind} {name!r} has no parameter {unknown[0]!r}; its parameters are: {', '.join(accepted)}."
        )
    kwargs = dict(fixed)
    kwargs.update({k: v for k, v in common.items() if k in params and v is not None})
    kwargs.update(explicit)
    missing = [n for n, p in params.items() if p.default is p.empty and n not in kwargs]
    if missing:
        flag = "--param" if kind == "learner" else "--feedback-param"
        raise CLIError(f"{kind} {name!r} needs {', '.join(missing)}: pass {flag} {missing[0]}=VALUE.")
    return factory(**kwargs)


def _lookup(registry: dict[str, Any], name: str, what: str):
    key = name.strip().lower()
    if key not in registry:
        raise CLIError(f"unknown {what} {name!r}; choose from: {', '.join(registry)}.")
    return key, registry[key]


def build_learner(name: str, n_classes: int, common: dict[str, Any], params: dict[str, Any]):
    """A learner from the registry: ``LEARNERS[name](n_classes, **accepted common flags, **params)``."""
    key, factory = _lookup(LEARNERS, name, "learner")
    return _build("learner", key, factory, common, params, {"n_classes": n_classes})


def build_feedback(name: str | None, learner, common: dict[str, Any], learner_params: dict[str, Any],
                   params: dict[str, Any]):
    """A channel from the registry; by default the one matching ``learner.feedback_kind``.

    Parameters the channel shares with the learner (e.g. ``m`` of MC-DBF and
    ``Diluted``) are passed on from the learner's --param values.
    """
    if name is None:
        kind = getattr(learner, "feedback_kind", "label")
        if kind not in DEFAULT_FEEDBACK:
            raise CLIError(f"no default feedback channel for {type(learner).__name__}; pass --feedback.")
        name = DEFAULT_FEEDBACK[kind]
    key, factory = _lookup(FEEDBACKS, name, "feedback")
    wanted = getattr(learner, "feedback_kind", None)
    if wanted is not None and _kind_of(factory) not in (None, wanted):
        fits = [n for n, f in FEEDBACKS.items() if _kind_of(f) == wanted]
        raise CLIError(f"{type(learner).__name__} learns from {wanted!r} feedback, which {key!r} does not give; "
                       f"use --feedback {' or '.join(fits) or '(none registered)'}.")
    fparams, _ = _signature(factory)
    shared = {k: v for k, v in learner_params.items() if k in fparams and k not in _COMMON and k not in params}
    return _build("feedback", key, factory, common, {**shared, **params}, {})


def _kind_of(factory) -> str | None:
    """The ``kind`` ('label', 'bandit', 'set', ...) of a channel class or a partial of one."""
    return getattr(getattr(factory, "func", factory), "kind", None)


def load_dataset(name: str, *, split: str = "train", data_dir: Path | None = None, normalize: bool = False,
                 n_samples: int | None = None, data_seed: int | None = None):
    """(X, y) through ``nf.datasets.load``; ``n_samples``/``data_seed`` go to generated sets only."""
    extra: dict[str, Any] = {}
    if n_samples is not None:
        extra["n_samples"] = n_samples
    if data_seed is not None:
        extra["seed"] = data_seed
    load = getattr(nf.datasets, "load", None)
    if load is None:  # an older library without the dataset registry: generators only
        key = name.strip().lower()
        if key not in GENERATORS:
            raise CLIError(f"unknown dataset {name!r}; this version can generate: {', '.join(GENERATORS)}.")
        return GENERATORS[key](normalize=normalize, **extra)
    if extra:
        kinds = {str(e["name"]).lower(): e.get("kind") for e in nf.datasets.catalog(data_dir)}
        if kinds.get(name.strip().lower()) not in (None, "generated"):
            raise CLIError(f"--n-samples and --data-seed apply to generated datasets only, not {name!r}.")
    return load(name, split=split, data_dir=data_dir, normalize=normalize, **extra)


def n_classes_of(y) -> int:
    y = np.asarray(y)
    if y.size == 0 or not np.issubdtype(y.dtype, np.integer):
        raise CLIError("the dataset's labels must be integers 0..K-1 for a multiclass learner.")
    return max(int(y.max()) + 1, 2)


# --------------------------------------------------------------- running
def _progress(con: Console | None = None) -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rounds"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=con or console,
        transient=False,
    )


def run_simulation(learner, X, y, feedback, n_rounds: int, seed, progress: Progress, task) -> "nf.Trace":
    """``nf.simulate`` with the progress task advanced by its ``progress`` callback."""
    base = next(t.completed for t in progress.tasks if t.id == task)

    def report(done: int) -> None:
        progress.update(task, completed=base + done)

    return nf.simulate(learner, X, y, feedback=feedback, n_rounds=n_rounds, seed=seed, progress=report)


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"noisyfeedback {nf.__version__}")
        raise typer.Exit()


def _complete(registry: dict[str, Any]) -> Callable[[str], list[str]]:
    return lambda incomplete: [k for k in registry if k.startswith(incomplete)]


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", "-V", help="Print the version and exit.", callback=_version_callback,
                           is_eager=True)
    ] = False,
) -> None:
    """Learning from imperfect feedback: simulate learners under noisy, bandit and diluted feedback."""


# -------------------------------------------------------------- datasets
def _fallback_catalog(data_dir) -> list[dict[str, Any]]:
    return [
        {"name": n, "kind": "generated", "n_samples": None, "n_features": 400, "n_classes": 9,
         "available": True, "path": None}
        for n in GENERATORS
    ]


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "[green]yes[/]" if v else "[red]no[/]"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    return escape(str(v))


@app.command()
def datasets(
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files "
                        "(default: $NOISYFEEDBACK_DATA, then ~/.cache/noisyfeedback).")] = None,
) -> None:
    """List the datasets: generated, bundled and file-based, and whether each is available."""
    with _user_errors():
        catalog = getattr(nf.datasets, "catalog", None)
        entries = catalog(data_dir) if catalog is not None else _fallback_catalog(data_dir)
    wide = console.width >= 110  # room for paths in the table; else they follow it
    table = Table(title="noisyfeedback datasets", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    for col in ("samples", "features", "classes"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("available", justify="center", no_wrap=True)
    if wide:
        table.add_column("path (or source)", overflow="fold")
    where_lines = []
    for e in entries:
        where = e.get("path")
        if where is not None:
            where = escape(str(where))
        elif e.get("kind") == "file":
            where = "not found" + (f"; source: [dim]{escape(str(e['source']))}[/]" if e.get("source") else "")
        row = [_fmt(e.get(k)) for k in ("name", "kind", "n_samples", "n_features", "n_classes", "available")]
        if wide:
            row.append(where or "—")
        elif where:
            where_lines.append(f"  {escape(str(e.get('name')))}: {where}")
        table.add_row(*row)
    console.print(table)
    if where_lines:
        console.print("Files:")
        for line in where_lines:
            console.print(line, soft_wrap=True)
    dirs = getattr(nf.datasets, "data_dirs", None)
    if dirs is not None:
        console.print("Data directories searched: " + ", ".join(escape(str(d)) for d in dirs(data_dir)))


# -------------------------------------------------------------- simulate
@app.command()
def simulate(
    learner: Annotated[str, typer.Option("--learner", "-l", help=f"Learner: {', '.join(LEARNERS)}.",
                                         autocompletion=_complete(LEARNERS))],
    dataset: Annotated[str, typer.Option("--dataset", help="Dataset name (see `noisyfeedback datasets`).")],
    feedback: Annotated[Optional[str], typer.Option(
        "--feedback", "-f", help=f"Feedback channel: {', '.join(FEEDBACKS)} "
        "(default: the one matching the learner: full for the Perceptron, noisy-bandit for bandit learners).",
        autocompletion=_complete(FEEDBACKS))] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
    split: Annotated[str, typer.Option(help="Dataset split for file-based datasets.")] = "train",
    normalize: Annotated[bool, typer.Option("--normalize/--no-normalize", help="Scale rows to unit L2 norm.")] = False,
    n_samples: Annotated[Optional[int], typer.Option(
        "--n-samples", min=1, help="Rows to generate (generated datasets only; default: the generator's).")] = None,
    data_seed: Annotated[Optional[int], typer.Option(help="Seed of generated datasets (default: the generator's, 0).")] = None,
    gamma: Annotated[float, typer.Option(help="Exploration rate γ (learners that explore).")] = 0.1,
    rho0: Annotated[float, typer.Option(help="P(feedback 1 | truly 0) of noisy channels "
                                        "(also given to learners that take rho0).")] = 0.2,
    rho1: Annotated[float, typer.Option(help="P(feedback 0 | truly 1) of noisy channels.")] = 0.4,
    param: Annotated[Optional[list[str]], typer.Option(
        "--param", "-p", help="Learner parameter NAME=VALUE (repeatable), e.g. -p gamma=0.05 -p seed=3.")] = None,
    feedback_param: Annotated[Optional[list[str]], typer.Option(
        "--feedback-param", help="Feedback channel parameter NAME=VALUE (repeatable), e.g. --feedback-param m=3.")] = None,
    rounds: Annotated[int, typer.Option("--rounds", "-n", min=1, help="Number of rounds.")] = 100_000,
    seed: Annotated[int, typer.Option(help="Simulation seed (round order, feedback and exploration draws).")] = 0,
    save_trace: Annotated[Optional[Path], typer.Option(help="Write the trace as JSON to this path.")] = None,
) -> None:
    """Simulate one learner on one dataset under one feedback channel and print its online error rate."""
    t0 = time.perf_counter()
    common = {"gamma": gamma, "rho0": rho0, "rho1": rho1}
    with _user_errors():
        lparams = parse_params(param, "--param")
        fparams = parse_params(feedback_param, "--feedback-param")
        _lookup(LEARNERS, learner, "learner")
        if feedback is not None:
            _lookup(FEEDBACKS, feedback, "feedback")
        X, y = load_dataset(dataset, split=split, data_dir=data_dir, normalize=normalize,
                            n_samples=n_samples, data_seed=data_seed)
        K = n_classes_of(y)
        model = build_learner(learner, K, common, lparams)
        channel = build_feedback(feedback, model, common, lparams, fparams)
        validate = getattr(model, "_validate_params", None)  # fail before the progress bar starts
        if validate is not None:
            validate()
        console.print(
            f"[bold]{escape(repr(model))}[/] under [bold]{escape(repr(channel))}[/] on "
            f"[bold]{escape(dataset)}[/] ({X.shape[0]:,} × {X.shape[1]:,}, K = {K}), "
            f"{rounds:,} rounds, seed {seed}"
        )
        with _progress() as progress:
            task = progress.add_task("simulating", total=rounds)
            trace = run_simulation(model, X, y, channel, rounds, seed, progress, task)
        total = time.perf_counter() - t0
        console.print(
            f"error rate  [bold cyan]{trace.error_rate:.4f}[/]  ({trace.mistakes:,} mistakes in {trace.n_rounds:,} rounds)"
        )
        console.print(
            f"speed       {trace.rounds_per_second:,.0f} rounds/s  (loop {trace.wall_time:.3f} s; "
            f"wall {total:.2f} s with data loading and compilation)"
        )
        if save_trace is not None:
            record = {"dataset": dataset, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                      "n_classes": K, **trace.to_dict()}
            _atomic_write_text(save_trace, json.dumps(record, indent=1, default=_json_default) + "\n")
            console.print(f"trace written to {escape(str(save_trace))}")


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ------------------------------------------------------------------ demo
@dataclass
class DemoDataset:
    """A dataset of the demo: a loader returning (X, y) and per-dataset hyperparameters."""

    name: str
    load: Callable[[], tuple]
    gamma: float = 0.05
    note: str = ""


class Unavailable(Exception):
    """Raised by a demo loader whose dataset cannot be had here (the demo skips it, saying why)."""


def _load_digits():
    if not hasattr(nf.datasets, "load"):
        raise Unavailable("nf.datasets.load is not available in this version")
    return nf.datasets.load("digits", normalize=True)


#: datasets of the demo's bandit part, in order; add entries to extend it
DEMO_DATASETS: list[DemoDataset] = [
    DemoDataset("synsep", lambda: nf.datasets.synsep(n_samples=20_000, seed=0), gamma=0.05,
                note="SynSep (Kakade et al. 2008): 20,000 generated examples, d = 400, K = 9, linearly separable."),
    DemoDataset("digits", _load_digits, gamma=0.1,
                note="scikit-learn digits (UCI optdigits 8×8): 1,797 examples, d = 64, K = 10, rows scaled to "
                     "unit L2 norm; the 200,000 rounds are ~110 passes over it."),
]


@dataclass
class DemoContext:
    """What a demo part gets: the budget, the seeds, a progress bar and a console."""

    rounds: int
    seeds: list[int]
    progress: Progress
    console: Console
    data_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    out: Path = Path("noisyfeedback-report")

    def run_many(self, description: str, runs: list[tuple[str, Callable[[], Any], Callable[[], Any]]], X, y):
        """Simulate every (label, make_learner, make_feedback) for every seed; return the Traces and labels."""
        task = self.progress.add_task(description, total=len(runs) * len(self.seeds) * self.rounds)
        traces, labels = [], []
        for label, make_learner, make_feedback in runs:
            for seed in self.seeds:
                traces.append(run_simulation(make_learner(), X, y, make_feedback(), self.rounds, seed,
                                             self.progress, task))
                labels.append(label)
        return traces, labels


def _summary_table(frame) -> "Any":
    """Final error rate, mean ± std over seeds, per label (order kept)."""
    import pandas as pd

    rows = []
    for label, g in frame.groupby("label", sort=False):
        e = g["error_rate"].to_numpy()
        rows.append({
            "configuration": label,
            "seeds": len(e),
            "rounds": int(g["n_rounds"].iloc[0]),
            "final error (mean ± std)": f"{e.mean():.4f} ± {e.std(ddof=1) if len(e) > 1 else 0.0:.4f}",
            "min": f"{e.min():.4f}",
            "max": f"{e.max():.4f}",
            "rounds/s": float((g["n_rounds"] / g["wall_time"]).median()),
        })
    table = pd.DataFrame(rows)
    table["rounds/s"] = table["rounds/s"].map(lambda v: f"{v:,.0f}")
    return table


def demo_bandit_baselines(ctx: DemoContext) -> list:
    """Perceptron (full labels) vs Banditron (clean bandit) vs Banditron under NoisyBandit(0.2, 0.4)."""
    from .plots import learning_curves, traces_to_frame
    from .report import Section

    sections = []
    for ds in DEMO_DATASETS:
        try:
            X, y = ds.load()
        except Unavailable as exc:
            ctx.notes.append(f"Dataset {ds.name} skipped: {exc}.")
            continue
        K = n_classes_of(y)
        g = ds.gamma
        runs = [
            ("Perceptron, full labels", lambda: nf.Perceptron(K), nf.feedback.FullLabel),
            (f"Banditron γ={g}, clean bandit", lambda: nf.Banditron(K, gamma=g), lambda: nf.feedback.NoisyBandit(0, 0)),
            (f"Banditron γ={g}, NoisyBandit(0.2,0.4)", lambda: nf.Banditron(K, gamma=g),
             lambda: nf.feedback.NoisyBandit(0.2, 0.4)),
        ]
        traces, labels = ctx.run_many(f"{ds.name}: bandit baselines", runs, X, y)
        frame = traces_to_frame(traces, labels)
        fig = learning_curves(frame, title=f"{ds.name}: cumulative online error rate "
                              f"(mean and min–max over {len(ctx.seeds)} seeds)")
        sections.append(Section(
            heading=f"Bandit baselines on {ds.name}",
            text=[
                ds.note,
                f"Each configuration runs {ctx.rounds:,} rounds (passes over the data, each in a fresh "
                f"seeded order) for seeds {', '.join(map(str, ctx.seeds))}. The error rate counts the "
                "greedy prediction against the **true** label, before the update.",
                f"Banditron's exploration rate γ = {g} is fixed here, not tuned. "
                "Expected: the Perceptron, seeing full labels, errs least; the Banditron pays for "
                "exploration with clean bandit feedback (a fraction γ·(K−1)/K of its rounds plays a random non-greedy label), and degrades "
                "badly when its feedback is flipped with ρ0 = 0.2, ρ1 = 0.4, because it treats the noisy "
                "feedback as clean (the noise-corrected RCNBF is the fix).",
            ],
            figures={f"{ds.name} learning curves (log-log)": fig},
            tables={f"{ds.name}: final online error rate": _summary_table(frame)},
        ))
    return sections


def demo_reproductions(ctx: DemoContext) -> list:
    """Every registered paper recipe in quick mode, each into ``<out>/reproduce/<name>/``, linked."""
    from .experiments import recipe_names, reproduce
    from .report import Section

    names = [n for n in recipe_names() if n != "example"]
    lines = []
    for name in names:
        t0 = time.perf_counter()
        try:
            path = reproduce(name, quick=True, data_dir=ctx.data_dir, out=ctx.out / "reproduce" / name,
                             jobs=2, progress=ctx.progress)  # results do not depend on the backend
        except Exception as exc:  # the demo goes on; the report says what failed
            lines.append(f"`{name}`: failed ({type(exc).__name__}: {exc}).")
            ctx.notes.append(f"Recipe {name} failed: {type(exc).__name__}: {exc}")
            continue
        rel = os.path.relpath(path, ctx.out).replace(os.sep, "/")
        lines.append(f"[{name}]({rel}) — quick mode, {time.perf_counter() - t0:.0f} s.")
    if not lines:
        return []
    return [Section(heading="Paper reproductions (quick mode)", text=[
        "Each paper's recipe, reduced to generated or bundled data (`noisyfeedback reproduce NAME --quick`); "
        "the full versions take `--data-dir` with the papers' data sets. Reports:"] + lines)]


#: the demo's parts, in report order: (name, function(ctx) -> list of report Sections); append to extend
DEMO_PARTS: list[tuple[str, Callable[[DemoContext], list]]] = [
    ("bandit-baselines", demo_bandit_baselines),
    ("reproductions", demo_reproductions),
]


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the report.")] = Path("noisyfeedback-report"),
    rounds: Annotated[int, typer.Option("--rounds", "-n", min=1, help="Rounds per run.")] = 200_000,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds per configuration (0, 1, ...).")] = 3,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
    parts: Annotated[Optional[list[str]], typer.Option("--part", help="Run only these demo parts "
                                                       "(repeatable): " + ", ".join(n for n, _ in DEMO_PARTS))] = None,
) -> None:
    """Run the built-in demo and write a Markdown + HTML report (learning curves, error tables)."""
    from .report import Section, write_report

    t0 = time.perf_counter()
    with _user_errors():
        sections = []
        with _progress() as progress:
            ctx = DemoContext(rounds=rounds, seeds=list(range(seeds)), progress=progress, console=console,
                              data_dir=data_dir, out=out)
            known = [n for n, _ in DEMO_PARTS]
            unknown = sorted(set(parts or []) - set(known))
            if unknown:
                raise CLIError(f"unknown demo part(s) {unknown}; choose from {known}.")
            for name, part in DEMO_PARTS:
                if parts is None or name in parts:
                    sections.extend(part(ctx))
        elapsed = time.perf_counter() - t0
        about = [
            f"Generated by `noisyfeedback demo --rounds {rounds} --seeds {seeds}` in {elapsed:.1f} s "
            f"(noisyfeedback {nf.__version__}, numpy {np.__version__}).",
        ] + ctx.notes
        sections.append(Section(heading="About this report", text=about))
        path = write_report(out, "noisyfeedback demo", sections,
                            intro="Online multiclass learning from imperfect feedback: learning curves and "
                                  "final error rates of the built-in demo.")
    for sec in sections:
        for caption, table in (sec.tables.items() if isinstance(sec.tables, dict) else []):
            t = Table(title=caption, title_justify="left")
            for col in table.columns:
                t.add_column(str(col), overflow="fold")
            for row in table.itertuples(index=False):
                t.add_row(*(escape(f"{v:.4f}" if isinstance(v, float) else str(v)) for v in row))
            console.print(t)
    for note in ctx.notes:
        console.print(f"[yellow]{escape(note)}[/]")
    console.print(f"Report written to [bold]{escape(str(path.resolve()))}[/] "
                  f"(and index.md) in {time.perf_counter() - t0:.1f} s.")


# ------------------------------------------------------------ experiments
@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="Experiment config (TOML).", exists=True, dir_okay=False)],
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (joblib); -1: every core.")] = 1,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", help="Dask scheduler address, "
                                                     "e.g. tcp://host:8786.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Results folder (default from the "
                                                "config, else ./results/<name>).")] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
) -> None:
    """Run a sweep from a TOML config; finished tasks are kept, so a killed run resumes."""
    from .experiments import run_config

    with _user_errors():
        if jobs != 1 and scheduler:
            raise CLIError("give either --jobs or --scheduler, not both.")
        path = run_config(config, jobs=jobs, scheduler=scheduler, out=out, progress=True, data_dir=data_dir)
    console.print(f"Results written to [bold]{escape(str(path))}[/]")


@app.command()
def plot(
    results: Annotated[Path, typer.Argument(help="results.parquet written by `run`.", exists=True)],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Folder for the PNG files.")] = None,
) -> None:
    """Learning-curve (and parameter-sweep) figures from a results table."""
    from .experiments import plot_results

    with _user_errors():
        paths = plot_results(results, out)
    for p in paths:
        console.print(str(p))


@app.command()
def reproduce(
    paper: Annotated[str, typer.Argument(help="Recipe name (agarwal2021, batra2021, ...) or 'all'.")],
    quick: Annotated[bool, typer.Option("--quick", help="Reduced version on generated/bundled data.")] = False,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Report folder.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes.")] = 1,
) -> None:
    """Rerun a paper's experiments and write DIR/index.html (and index.md) with its figures and tables."""
    from .experiments import RecipeError, reproduce as run_recipe

    with _user_errors():
        try:
            path = run_recipe(paper, quick=quick, data_dir=data_dir, out=out, jobs=jobs, progress=True)
        except RecipeError as exc:
            raise CLIError(str(exc)) from None
    console.print(f"Report written to [bold]{escape(str(Path(path).resolve()))}[/]")


if __name__ == "__main__":  # pragma: no cover
    app()
