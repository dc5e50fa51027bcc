"""The ``noisyfeedback`` command line: thin — parse, call the library, print with rich.

Commands: ``datasets`` (the catalog), ``simulate`` (one run with a progress bar),
``run`` (a TOML experiment config: a resumable sweep), ``plot`` (figures from a
results table), ``reproduce`` (a paper's experiments and report) and ``demo``
(a Markdown + HTML report built from a list of demo parts: the bandit baselines,
then every paper recipe in quick mode).

Learners and feedback channels are looked up in the package's one registry,
:mod:`noisyfeedback.registry` (a new learner there is a new learner here). A class's
keyword parameters are read from its signature: the common flags (``--gamma``,
``--rho0``, ``--rho1``) reach every class that accepts them, ``--param k=v`` sets any
learner parameter and ``--feedback-param k=v`` any channel parameter. The default
channel follows the learner's ``feedback_kind`` (see :data:`DEFAULT_FEEDBACK`).
``simulate`` runs every registered learner: online classifiers and regression learners
through ``nf.simulate``; UMA is fitted on labels corrupted by a ``ConfusionNoise`` channel
and the teacher learners on labels of random teachers, some of them evil (all labels
flipped); both are scored on held-out rows against the clean labels.
"""

from __future__ import annotations

import ast
import re
import inspect
import json
import os
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

from . import registry
from ._io import atomic_write_text, dumps

__all__ = ["app", "DEFAULT_FEEDBACK", "REGRESSION_DATASETS", "DEMO_PARTS", "DEMO_DATASETS"]

# ------------------------------------------------------------- registry
# Learners and channels come from the package's one registry, :mod:`noisyfeedback.registry`, by
# name (case-insensitive; '-', '_' and spaces ignored: ``rc-nbf``, ``noisy-bandit``).

#: a learner's ``feedback_kind`` -> the channel used when --feedback is not given
DEFAULT_FEEDBACK = {"label": "FullLabel", "bandit": "NoisyBandit", "set": "Diluted", "target": "GaussianNoise"}

#: parameters set by the common flags (never taken from a learner's --param for the channel)
_COMMON = ("gamma", "rho0", "rho1")

#: regression streams (float targets, for NLMS/ORS) by name: functions of :mod:`noisyfeedback.datasets`
REGRESSION_DATASETS = ("ors_synthetic", "channel_equalization", "speech_substitute")

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
_USER_ERRORS = (CLIError, ValueError, TypeError, KeyError, FileNotFoundError, NotImplementedError, OSError,
                EOFError)  # EOFError: a truncated file (click would print a bare "Aborted.")


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


def learner_class(name: str) -> type:
    """The registered learner class called ``name`` (see :func:`noisyfeedback.registry.resolve_learner`)."""
    try:
        return registry.resolve_learner(name)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def channel_class(name: str) -> type:
    """The registered feedback channel class called ``name``."""
    try:
        return registry.resolve_channel(name)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def learner_role(cls: type) -> str:
    """How ``simulate`` runs a learner class: 'online', 'regression', 'teachers' or 'batch'."""
    if getattr(cls, "feedback_kind", None) == "target":
        return "regression"
    if hasattr(cls, "_simulate_chunk"):
        return "online"
    fit = getattr(cls, "fit", None)
    if fit is not None and "teachers" in inspect.signature(fit).parameters:
        return "teachers"
    return "batch"


def build_learner(name: str, n_classes: int | None, common: dict[str, Any], params: dict[str, Any]):
    """A registered learner: ``cls(n_classes=..., **accepted common flags, **params)``."""
    cls = learner_class(name)
    fixed = {"n_classes": n_classes} if "n_classes" in _signature(cls)[0] else {}
    return _build("learner", cls.__name__, cls, common, params, fixed)


def _symmetric_confusion(rate: float, n_classes: int) -> np.ndarray:
    """C with 1 − rate on the diagonal and rate/(K − 1) elsewhere (uniform label noise)."""
    C = np.full((n_classes, n_classes), rate / max(n_classes - 1, 1))
    np.fill_diagonal(C, 1.0 - rate)
    return C


def build_feedback(name: str | None, learner_cls: type, common: dict[str, Any], learner_params: dict[str, Any],
                   params: dict[str, Any], n_classes: int | None = None):
    """A registered channel; by default the one matching the learner's ``feedback_kind``.

    Parameters the channel shares with the learner (e.g. ``m`` of MC-DBF and ``Diluted``) are
    passed on from the learner's --param values. ``ConfusionNoise``'s ``C`` may be a number:
    the uniform noise rate of a symmetric C over the dataset's classes.
    """
    if name is None:
        kind = getattr(learner_cls, "feedback_kind", "label")
        if learner_role(learner_cls) == "batch":
            name = "ConfusionNoise"
        elif kind in DEFAULT_FEEDBACK:
            name = DEFAULT_FEEDBACK[kind]
        else:
            raise CLIError(f"no default feedback channel for {learner_cls.__name__}; pass --feedback.")
    cls = channel_class(name)
    wanted = getattr(learner_cls, "feedback_kind", None)
    if wanted is not None and cls.kind != wanted:
        fits = [n for n, c in registry.channel_classes().items() if c.kind == wanted]
        raise CLIError(f"{learner_cls.__name__} learns from {wanted!r} feedback, which {cls.__name__} does not "
                       f"give; use --feedback {' or '.join(fits) or '(none registered)'}.")
    fparams, _ = _signature(cls)
    shared = {k: v for k, v in learner_params.items() if k in fparams and k not in _COMMON and k not in params}
    params = {**shared, **params}
    if isinstance(params.get("C"), (int, float)) and not isinstance(params.get("C"), bool) and n_classes:
        params["C"] = _symmetric_confusion(float(params["C"]), n_classes)
    return _build("feedback", cls.__name__, cls, common, params, {})


def load_dataset(name: str, *, split: str = "train", data_dir: Path | None = None, normalize: bool = False,
                 n_samples: int | None = None, data_seed: int | None = None):
    """(X, y) through ``nf.datasets.load`` (or a regression stream of :data:`REGRESSION_DATASETS`);
    ``n_samples``/``data_seed`` go to generated sets only."""
    extra: dict[str, Any] = {}
    if n_samples is not None:
        extra["n_samples"] = n_samples
    if data_seed is not None:
        extra["seed"] = data_seed
    stream = {registry.key(n): n for n in REGRESSION_DATASETS}.get(registry.key(name))
    if stream is not None:
        X, y = getattr(nf.datasets, stream)(**extra)
        return (nf.datasets.normalize_rows(X) if normalize else X), y
    if extra:
        kinds = {str(e["name"]).lower(): e.get("kind") for e in nf.datasets.catalog(data_dir)}
        if kinds.get(name.strip().lower()) not in (None, "generated"):
            raise CLIError(f"--n-samples and --data-seed apply to generated datasets only, not {name!r}.")
    return nf.datasets.load(name, split=split, data_dir=data_dir, normalize=normalize, **extra)


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


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"noisyfeedback {nf.__version__}")
        raise typer.Exit()


def _complete(names: dict[str, Any]) -> Callable[[str], list[str]]:
    return lambda incomplete: [k for k in names if registry.key(k).startswith(registry.key(incomplete))]


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", "-V", help="Print the version and exit.", callback=_version_callback,
                           is_eager=True)
    ] = False,
) -> None:
    """Learning from imperfect feedback: simulate learners under noisy, bandit and diluted feedback."""


# -------------------------------------------------------------- datasets
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
        entries = nf.datasets.catalog(data_dir)
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
    console.print("Data directories searched: " + ", ".join(escape(str(d)) for d in nf.datasets.data_dirs(data_dir)))


# -------------------------------------------------------------- simulate
@app.command()
def simulate(
    learner: Annotated[str, typer.Option("--learner", "-l", help=f"Learner: {', '.join(registry.LEARNERS)}.",
                                         autocompletion=_complete(registry.LEARNERS))],
    dataset: Annotated[str, typer.Option("--dataset", help="Dataset name (see `noisyfeedback datasets`; regression "
                                         f"streams: {', '.join(REGRESSION_DATASETS)}).")],
    feedback: Annotated[Optional[str], typer.Option(
        "--feedback", "-f", help=f"Feedback channel: {', '.join(registry.CHANNELS)} (default: the one matching the "
        "learner: FullLabel for the Perceptron and MC-SLP, NoisyBandit for bandit learners, Diluted for MC-DBF, "
        "GaussianNoise for NLMS/ORS, ConfusionNoise for UMA; ConfusionNoise takes C as a matrix or as a uniform "
        "noise rate, e.g. --feedback-param C=0.3).",
        autocompletion=_complete(registry.CHANNELS))] = None,
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
        "--feedback-param", "-F", help="Feedback channel parameter NAME=VALUE (repeatable), e.g. "
        "--feedback-param m=3, -F variance=0.5, -F C=0.3.")] = None,
    rounds: Annotated[int, typer.Option("--rounds", "-n", min=1, help="Number of rounds (online learners).")] = 100_000,
    seed: Annotated[int, typer.Option(help="Simulation seed (round order, feedback and exploration draws; "
                                      "the held-out split, label noise and teachers of batch learners).")] = 0,
    teachers: Annotated[int, typer.Option("--teachers", min=1, help="Teacher learners: number of random "
                                          "teachers labelling the rows.")] = 10,
    evil: Annotated[float, typer.Option("--evil", min=0.0, max=1.0, help="Teacher learners: fraction of the "
                                        "teachers that are evil (flip all their labels).")] = 0.2,
    test_fraction: Annotated[float, typer.Option("--test-fraction", min=0.05, max=0.95, help="Batch learners "
                                                 "(UMA, teachers): share of rows held out for the error.")] = 0.25,
    save_trace: Annotated[Optional[Path], typer.Option(help="Write the trace (or result) as JSON to this path.")] = None,
) -> None:
    """Simulate one learner on one dataset under one feedback channel and print its error (or MSE).

    Online learners (bandit, diluted, full-label) run --rounds rounds of nf.simulate and print the
    online error rate; NLMS/ORS print the MSE against the clean targets; UMA is fitted on labels corrupted
    by the channel and the teacher learners on labels from --teachers random teachers of which a fraction
    --evil flip all their labels; both print the error on held-out rows against the clean labels.
    """
    t0 = time.perf_counter()
    common = {"gamma": gamma, "rho0": rho0, "rho1": rho1}
    with _user_errors():
        lparams = parse_params(param, "--param")
        fparams = parse_params(feedback_param, "--feedback-param")
        cls = learner_class(learner)
        role = learner_role(cls)
        if feedback is not None:
            channel_class(feedback)
        if role == "teachers" and feedback is not None:
            raise CLIError(f"{cls.__name__} learns from teachers' labels: use --teachers and --evil, not --feedback.")
        X, y = load_dataset(dataset, split=split, data_dir=data_dir, normalize=normalize,
                            n_samples=n_samples, data_seed=data_seed)
        K = None if role == "regression" else n_classes_of(y)
        if role == "teachers" and K != 2:
            raise CLIError(f"{cls.__name__} is a binary learner; {dataset!r} has {K} classes "
                           "(choose a 2-class dataset, e.g. breast_cancer or rcv1).")
        channel = None if role == "teachers" else build_feedback(feedback, cls, common, lparams, fparams, K)
        if role == "batch" and "confusion" in _signature(cls)[0] and "confusion" not in lparams \
                and hasattr(channel, "C"):
            lparams["confusion"] = channel.C  # UMA corrects the noise the channel adds (known C)
        model = build_learner(learner, K, common, lparams)
        validate = getattr(model, "_validate_params", None)  # fail before the progress bar starts
        if validate is not None:
            validate()
        shape = f"{X.shape[0]:,} × {X.shape[1]:,}" + (f", K = {K}" if K else ", real-valued targets")
        under = "random teachers" if channel is None else _short_repr(channel)
        what = f"{rounds:,} rounds" if role in ("online", "regression") else f"{test_fraction:.0%} held out"
        console.print(f"[bold]{escape(_short_repr(model))}[/] under [bold]{escape(under)}[/] on "
                      f"[bold]{escape(dataset)}[/] ({shape}), {what}, seed {seed}")
        if role in ("online", "regression"):
            with _progress() as progress:
                task = progress.add_task("simulating", total=rounds)
                trace = run_simulation(model, X, y, channel, rounds, seed, progress, task)
            record = trace.to_dict()
            total = time.perf_counter() - t0
            if role == "regression":
                console.print(f"mse         [bold cyan]{trace.mse:.6g}[/]  (against the clean targets, "
                              f"noisy labels per round: {trace.metrics['labels_rate']:.3g})")
            else:
                console.print(f"error rate  [bold cyan]{trace.error_rate:.4f}[/]  ({trace.mistakes:,} mistakes in "
                              f"{trace.n_rounds:,} rounds)")
            console.print(f"speed       {trace.rounds_per_second:,.0f} rounds/s  (loop {trace.wall_time:.3f} s; "
                          f"wall {total:.2f} s with data loading and compilation)")
        else:
            record = fit_batch(model, X, y, channel, role, seed=seed, teachers=teachers, evil=evil,
                               test_fraction=test_fraction)
            console.print(f"test error  [bold cyan]{record['error_rate']:.4f}[/]  (against the clean labels of "
                          f"{record['n_test']:,} held-out rows; {record['label_noise']:.1%} of the training "
                          f"labels were wrong; fit {record['wall_time']:.2f} s)")
        if save_trace is not None:
            record = {"dataset": dataset, "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                      "n_classes": K, **record}
            atomic_write_text(save_trace, dumps(record, indent=1) + "\n")
            console.print(f"trace written to {escape(str(save_trace))}", soft_wrap=True)


def _short_repr(obj: Any) -> str:
    """``repr(obj)`` with its arrays (a confusion matrix) shortened to ``array(...)``: one line."""
    return re.sub(r"array\(\[.*?\]\)(?=[,)])", "array(...)", repr(obj), flags=re.S)


def fit_batch(model, X, y, channel, role: str, *, seed: int, teachers: int = 10, evil: float = 0.2,
              test_fraction: float = 0.25) -> dict[str, Any]:
    """Fit a batch learner on corrupted training labels and score it on held-out rows (clean labels).

    ``role`` 'batch' (UMA): the training labels are ``channel.respond(y)`` (e.g. ConfusionNoise);
    'teachers': labels y ∈ {−1, +1} from ``teachers`` random teachers, ``round(evil · teachers)`` of
    them flipping all their labels (Dekel & Shamir's protocol). One seed draws the split, the noise
    and the teachers (independent streams of ``SeedSequence(seed)``).
    """
    s_split, s_noise, s_teachers = np.random.SeedSequence(seed).spawn(3)
    n = X.shape[0]
    perm = np.random.Generator(np.random.PCG64(s_split)).permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    if train.size == 0:
        raise CLIError(f"no training rows left with --test-fraction {test_fraction}.")
    y = np.asarray(y)
    record: dict[str, Any] = {"learner": repr(model), "seed": seed, "n_train": int(train.size),
                              "n_test": int(test.size)}
    t0 = time.perf_counter()
    if role == "teachers":
        from .datasets.teachers import flip_evil, random_teachers

        y_pm = np.where(y == y.max(), 1, -1).astype(np.int64)
        tid = random_teachers(train.size, teachers, seed=s_teachers)
        n_evil = int(round(evil * teachers))
        noisy, evil_ids = flip_evil(y_pm[train], tid, n_evil=n_evil, seed=s_noise)
        model.fit(X[train], noisy, teachers=tid)
        clean = y_pm
        record.update(feedback=f"{teachers} random teachers, {n_evil} evil", evil_teachers=evil_ids)
    else:
        noisy = channel.respond(y[train], rng=np.random.Generator(np.random.PCG64(s_noise)))
        model.fit(X[train], noisy)
        clean = y
        record["feedback"] = repr(channel)
    record["wall_time"] = time.perf_counter() - t0
    record["label_noise"] = float(np.mean(noisy != clean[train]))
    record["error_rate"] = float(np.mean(model.predict(X[test]) != clean[test]))
    return record


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
                  f"(and index.md) in {time.perf_counter() - t0:.1f} s.", soft_wrap=True)


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
        console.print(results_table(path))
    console.print(f"Results written to [bold]{escape(str(path))}[/]", soft_wrap=True)


def results_table(path: Path) -> Table:
    """The numbers of a results table: final error (or MSE) mean ± std, min, max over seeds, per
    (phase,) dataset, channel, learner and grid value (parameter columns with several values)."""
    import pandas as pd

    frame = pd.read_parquet(path)
    keys = [k for k in ("phase", "dataset", "channel", "learner") if k in frame.columns]
    # grid axes: the parameter columns that take more than one value
    keys += [c for c in frame.columns if c.split(".")[0] in ("dataset", "channel", "learner") and "." in c
             and frame[c].astype(str).nunique() > 1]
    metric = "error_rate" if "error_rate" in frame.columns else None
    regression = "mse" in frame.columns and frame["mse"].notna().all()
    table = Table(title=f"{escape(str(path))}: {'MSE' if regression else 'final error rate'} over seeds",
                  title_justify="left")
    for k in keys:
        table.add_column(k, overflow="fold")
    for col in ("seeds", "rounds", "mean ± std", "min", "max"):
        table.add_column(col, justify="right", no_wrap=True)
    for group, g in frame.groupby(keys, sort=False, dropna=False) if keys else [((), frame)]:
        group = group if isinstance(group, tuple) else (group,)
        e = g[metric].to_numpy(dtype=float) if metric else np.full(len(g), np.nan)
        std = e.std(ddof=1) if len(e) > 1 else 0.0
        rounds = g["n_rounds"].iloc[0] if "n_rounds" in g else None
        table.add_row(*(escape(str(v)) for v in group), str(len(g)), _fmt(rounds),
                      f"{e.mean():.4g} ± {std:.2g}", f"{e.min():.4g}", f"{e.max():.4g}")
    return table


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
    console.print(f"Report written to [bold]{escape(str(Path(path).resolve()))}[/]", soft_wrap=True)


from .service.cli import register as _register_service  # noqa: E402  (serve, keys create, export-log)

_register_service(app)
from .cli_vw import register as _register_vw  # noqa: E402  (train, predict, evaluate on VW text files)
_register_vw(app)

if __name__ == "__main__":  # pragma: no cover
    app()
