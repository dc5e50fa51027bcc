"""The ``noisyfeedback`` command line: thin — parse, call the library, print with rich.

Commands: ``datasets`` (the catalog), ``simulate`` (one run with a progress bar), and the
lab's commands, whose work `noisyfeedback.lab` does (imported when they run): ``run`` (a
TOML experiment config: a resumable sweep), ``plot`` (figures from a results table),
``reproduce`` (a paper's experiments and report) and ``demo`` (a Markdown + HTML report built
from `noisyfeedback.lab.commands.DEMO_PARTS`). The service's commands (``serve``,
``keys``, ``export-log``) come from `noisyfeedback.service.cli`. This module is the top of
the package: nothing in it is imported by the library, the service or the lab.

Learners and feedback channels are looked up in the package's one registry,
`noisyfeedback.registry` (a new learner there is a new learner here). A class's
keyword parameters are read from its signature: the common flags (``--gamma``,
``--rho0``, ``--rho1``) reach every class that accepts them, ``--param k=v`` sets any
learner parameter and ``--feedback-param k=v`` any channel parameter. The default
channel follows the learner's ``feedback_kind`` (see `DEFAULT_FEEDBACK`).
``simulate`` runs every registered learner: online classifiers and regression learners
through ``nf.simulate``; UMA is fitted on labels corrupted by a ``ConfusionNoise`` channel
and the teacher learners on labels of random teachers, some of them evil (all labels
flipped); both are scored on held-out rows against the clean labels.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

from .. import build, registry
from .._io import atomic_write_text, dumps
from ..build import parse_params  # noqa: F401  (the CLI's NAME=VALUE flags)

__all__ = ["app", "DEFAULT_FEEDBACK"]

# ------------------------------------------------------------- building
# Everything is built by the build layer, `noisyfeedback.build` (names, parameters, defaults, how a
# learner and a channel fit together); this module only renders its typed errors as flags.

#: the channels by a learner's ``feedback_kind`` and their parameters (the build layer's)
DEFAULT_FEEDBACK = build.DEFAULT_CHANNEL
DEFAULT_FEEDBACK_PARAMS = build.DEFAULT_CHANNEL_PARAMS

#: parameters set by the common flags (never taken from a learner's --param for the channel); not given, a
#: learner or channel takes its own default (the library's: rho0 = rho1 = 0, noise-free, γ = 0.1)
_COMMON = ("gamma", "rho0", "rho1")

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


def _in_flags(exc: build.BuildError) -> str:
    """A build error in the command line's words (its flags)."""
    msg = str(exc)
    if isinstance(exc, build.Mismatch) and exc.channel is None:
        return f"no default feedback channel for {exc.learner}; pass --feedback."
    if isinstance(exc, build.Mismatch):
        return (f"{exc.learner} learns from {exc.wanted!r} feedback, which {exc.channel} does not give; "
                f"use --feedback {' or '.join(exc.fits) or '(none registered)'}.")
    if isinstance(exc, build.BadParameter):
        is_channel = exc.owner in registry.CHANNELS
        if exc.reason == "missing" and not is_channel:
            return f"{msg.rstrip('.')}: pass --param NAME=VALUE."
        if exc.reason == "missing" and exc.owner != "ConfusionNoise":
            return f"{msg} Pass --feedback-param NAME=VALUE."
        if exc.reason == "choice":
            return f"{msg} Pass --feedback-param noise=RATE (e.g. -F noise=0.2) or C=RATE."
    return msg


@contextmanager
def _user_errors() -> Iterator[None]:
    try:
        yield
    except _USER_ERRORS as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        if isinstance(exc, build.BuildError):
            msg = _in_flags(exc)
        err_console.print(f"[bold red]Error:[/] [red]{escape(str(msg))}[/]", soft_wrap=True)
        raise typer.Exit(2) from None


# --------------------------------------------------------------- building
def _with_common(names: list[str], common: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` plus the common flags given (--gamma, --rho0, --rho1) that the parameters ``names`` include."""
    return {**{k: v for k, v in common.items() if k in names and v is not None}, **params}


def build_feedback(name: str | None, learner_cls: type, common: dict[str, Any], learner_params: dict[str, Any],
                   params: dict[str, Any], n_classes: int | None = None):
    """The channel of a run (`noisyfeedback.build.build_channel_for`), given the common flags it takes."""
    cls = build.channel_class(name if name is not None else build.default_channel(learner_cls))
    params = _with_common(list(registry.channel_params(cls)), common, params)
    return build.build_channel_for(learner_cls, cls, n_classes, learner_params, **params)


def check_flags(cls: type, role: str, channel_cls: type | None, given: dict[str, Any]) -> None:
    """Refuse a flag that the learner (and its channel) does not take, instead of ignoring it.

    ``given``: the flags the user set (``None``: not given): the common ``gamma``, ``rho0``, ``rho1``
    go to the learner or the channel that takes them; ``rounds`` to online learners; ``teachers``,
    ``evil`` to teacher learners; ``test_fraction`` to batch and teacher learners."""
    takes = set(registry.learner_params(cls)) | (set(registry.channel_params(channel_cls)) if channel_cls else set())
    for flag in _COMMON:
        if given.get(flag) is not None and flag not in takes:
            under = f" nor {channel_cls.__name__}" if channel_cls is not None else ""
            takes = ", ".join(p for p in registry.learner_params(cls) if p != "n_classes")
            raise CLIError(f"--{flag} does not apply to {cls.__name__}{under} (no parameter {flag!r}); "
                           f"{cls.__name__} takes: {takes}.")
    roles = {"rounds": ("online", "regression"), "teachers": ("teachers",), "evil": ("teachers",),
             "test_fraction": ("batch", "teachers")}
    for flag, where in roles.items():
        if given.get(flag) is not None and role not in where:
            what = {"online": "an online learner (--rounds)", "regression": "an online learner (--rounds)",
                    "batch": "a batch learner (--test-fraction)",
                    "teachers": "a teacher learner (--teachers, --evil, --test-fraction)"}[role]
            raise CLIError(f"--{flag.replace('_', '-')} does not apply to {cls.__name__}, {what}.")


def load_dataset(name: str, *, split: str = "train", data_dir: Path | None = None, normalize: bool = False,
                 n_samples: int | None = None, data_seed: int | None = None):
    """(X, y) of a catalogue dataset (`noisyfeedback.build.load_dataset`) or a data file;
    ``n_samples``/``data_seed`` go to generated sets only."""
    extra: dict[str, Any] = {}
    if n_samples is not None:
        extra["n_samples"] = n_samples
    if data_seed is not None:
        extra["seed"] = data_seed
    if extra:
        try:
            kind = registry.dataset_info(name, data_dir)["kind"]
        except ValueError:
            kind = None  # a path, or an unknown name (load says which)
        if kind not in (None, "generated"):
            raise CLIError(f"--n-samples and --data-seed apply to generated datasets only, not {name!r}.")
    return build.load_dataset(name, split=split, data_dir=data_dir, normalize=normalize, **extra)


def n_classes_of(y) -> int:
    """The number of classes of a multiclass learner's labels (`noisyfeedback.build.n_classes_of`)."""
    K = build.n_classes_of(y)
    if K is None:
        raise CLIError("the dataset's labels must be integers 0..K-1 for a multiclass learner.")
    return K


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
    dataset: Annotated[str, typer.Option("--dataset", help="Dataset name (see `noisyfeedback datasets`: generated, "
                                         "bundled, file-based and the regression streams) or a data file.")],
    feedback: Annotated[Optional[str], typer.Option(
        "--feedback", "-f", help=f"Feedback channel: {', '.join(registry.CHANNELS)} "
        f"(or {', '.join(registry.CHANNEL_ALIASES)}; "
        "default: the one matching the "
        "learner: FullLabel for the Perceptron and MC-SLP, NoisyBandit for bandit learners, Diluted for MC-DBF, "
        "GaussianNoise for NLMS/ORS, ConfusionNoise for UMA; ConfusionNoise takes C as a matrix or as a uniform "
        "noise rate, e.g. --feedback-param C=0.3).",
        autocompletion=_complete(registry.channel_names()))] = None,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
    split: Annotated[str, typer.Option(help="Dataset split for file-based datasets.")] = "train",
    normalize: Annotated[bool, typer.Option("--normalize/--no-normalize", help="Scale rows to unit L2 norm.")] = False,
    n_samples: Annotated[Optional[int], typer.Option(
        "--n-samples", min=1, help="Rows to generate (generated datasets only; default: the generator's).")] = None,
    data_seed: Annotated[Optional[int], typer.Option(
        help="Seed of generated datasets (default: the generator's, 0).")] = None,
    gamma: Annotated[Optional[float], typer.Option(help="Exploration rate γ of the learners that take one "
                                                   "(default 0.1; refused for a learner without γ).")] = None,
    rho0: Annotated[Optional[float], typer.Option(help="P(feedback 1 | truly 0) of noisy channels (also given to "
                                                  "learners that take rho0; default 0: noise-free, as in the "
                                                  "library).")] = None,
    rho1: Annotated[Optional[float], typer.Option(help="P(feedback 0 | truly 1) of noisy channels (also given to "
                                                  "learners that take rho1; default 0).")] = None,
    param: Annotated[Optional[list[str]], typer.Option(
        "--param", "-p", help="Learner parameter NAME=VALUE (repeatable), e.g. -p gamma=0.05 -p seed=3.")] = None,
    feedback_param: Annotated[Optional[list[str]], typer.Option(
        "--feedback-param", "-F", help="Feedback channel parameter NAME=VALUE (repeatable), e.g. "
        "--feedback-param m=3, -F variance=0.5, -F C=0.3.")] = None,
    rounds: Annotated[Optional[int], typer.Option("--rounds", "-n", min=1, help="Number of rounds (online learners; "
                                                  "default 100,000).")] = None,
    seed: Annotated[int, typer.Option(help="Simulation seed (round order, feedback and exploration draws; "
                                      "the held-out split, label noise and teachers of batch learners).")] = 0,
    teachers: Annotated[Optional[int], typer.Option("--teachers", min=1, help="Teacher learners: number of random "
                                                    "teachers labelling the rows (default 10).")] = None,
    evil: Annotated[Optional[float], typer.Option(
        "--evil", min=0.0, max=1.0,
        help="Teacher learners: fraction of the teachers that are evil (flip all their labels; default 0.2).")] = None,
    test_fraction: Annotated[Optional[float], typer.Option("--test-fraction", min=0.05, max=0.95, help="Batch learners "
                                                           "(UMA, teachers): share of rows held out for the error "
                                                           "(default 0.25).")] = None,
    save_trace: Annotated[Optional[Path], typer.Option(
        help="Write the trace (or result) as JSON to this path.")] = None,
) -> None:
    """Simulate one learner on one dataset under one feedback channel and print its error (or MSE).

    Online learners (bandit, diluted, full-label) run --rounds rounds of nf.simulate and print the
    online error rate; NLMS/ORS print the MSE against the clean targets; UMA is fitted on labels corrupted
    by the channel and the teacher learners on labels from --teachers random teachers of which a fraction
    --evil flip all their labels; both print the error on held-out rows against the clean labels.
    """
    t0 = time.perf_counter()
    given = {"gamma": gamma, "rho0": rho0, "rho1": rho1, "rounds": rounds, "teachers": teachers, "evil": evil,
             "test_fraction": test_fraction}
    common = {k: given[k] for k in _COMMON if given[k] is not None}
    rounds = 100_000 if rounds is None else rounds
    teachers = 10 if teachers is None else teachers
    evil = 0.2 if evil is None else evil
    test_fraction = 0.25 if test_fraction is None else test_fraction
    with _user_errors():
        lparams = parse_params(param, "--param")
        fparams = parse_params(feedback_param, "--feedback-param")
        cls = build.learner_class(learner)
        role = build.learner_role(cls)
        if role == "teachers" and feedback is not None:
            raise CLIError(f"{cls.__name__} learns from teachers' labels: use --teachers and --evil, not --feedback.")
        if role == "teachers" and feedback_param:
            raise CLIError(f"{cls.__name__} learns from teachers' labels: it has no feedback channel to take "
                           "--feedback-param.")
        channel_cls = None if role == "teachers" else build.channel_class(
            feedback if feedback is not None else build.default_channel(cls))
        check_flags(cls, role, channel_cls, given)
        X, y = load_dataset(dataset, split=split, data_dir=data_dir, normalize=normalize,
                            n_samples=n_samples, data_seed=data_seed)
        K = None if role == "regression" else n_classes_of(y)
        if role == "teachers" and K != 2:
            raise CLIError(f"{cls.__name__} is a binary learner; {dataset!r} has {K} classes "
                           "(choose a 2-class dataset, e.g. breast_cancer or rcv1).")
        channel = None if role == "teachers" else build_feedback(feedback, cls, common, lparams, fparams, K)
        model = build.build_learner_for(cls, K, channel, **_with_common(registry.learner_params(cls), common, lparams))
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
            record = nf.fit_batch(model, X, y, channel, seed=seed, teachers=teachers, evil=evil,
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


# ------------------------------------------------------ the lab's commands
# demo, run, plot and reproduce run studies and write reports: their work is done by the lab
# (`noisyfeedback.lab.commands`), imported when one of them runs.
_LAB_EXTRA = ("matplotlib", "pydantic", "joblib", "dask")


@contextmanager
def _lab_extra(command: str) -> Iterator[None]:
    """The lab's commands without the lab's extra installed: one line saying what to install."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in _LAB_EXTRA:
            err_console.print(f"[bold red]Error:[/] [red]`noisyfeedback {command}` runs in the lab, which needs "
                              f"{exc.name.split('.')[0]}: pip install 'noisyfeedback\\[lab]'.[/]", soft_wrap=True)
            raise typer.Exit(2) from None
        raise


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the report.")] = Path("noisyfeedback-report"),
    rounds: Annotated[int, typer.Option("--rounds", "-n", min=1, help="Rounds per run.")] = 200_000,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds per configuration (0, 1, ...).")] = 3,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", "-d", help="Folder with dataset files.")] = None,
    parts: Annotated[Optional[list[str]], typer.Option("--part", help="Run only these demo parts "
                                                       "(repeatable): bandit-baselines, reproductions.")] = None,
) -> None:
    """Run the built-in demo and write a Markdown + HTML report (learning curves, error tables)."""
    with _lab_extra("demo"):
        from ..lab import commands

    t0 = time.perf_counter()
    with _user_errors():
        path, sections, notes = commands.demo(out, rounds, seeds, data_dir, parts, _progress(), console)
    for sec in sections:
        for caption, table in (sec.tables.items() if isinstance(sec.tables, dict) else []):
            t = Table(title=caption, title_justify="left")
            for col in table.columns:
                t.add_column(str(col), overflow="fold")
            for row in table.itertuples(index=False):
                t.add_row(*(escape(f"{v:.4f}" if isinstance(v, float) else str(v)) for v in row))
            console.print(t)
    for note in notes:
        console.print(f"[yellow]{escape(note)}[/]")
    console.print(f"Report written to [bold]{escape(str(path.resolve()))}[/] "
                  f"(and index.md) in {time.perf_counter() - t0:.1f} s.", soft_wrap=True)


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
    with _lab_extra("run"):
        from ..lab.commands import results_table
        from ..lab.runner import run_config

    with _user_errors():
        if jobs != 1 and scheduler:
            raise CLIError("give either --jobs or --scheduler, not both.")
        path = run_config(config, jobs=jobs, scheduler=scheduler, out=out, progress=True, data_dir=data_dir)
        console.print(results_table(path))
    console.print(f"Results written to [bold]{escape(str(path))}[/]", soft_wrap=True)


@app.command()
def plot(
    results: Annotated[Path, typer.Argument(help="results.parquet written by `run`.", exists=True)],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Folder for the PNG files.")] = None,
) -> None:
    """Learning-curve (and parameter-sweep) figures from a results table."""
    with _lab_extra("plot"):
        from ..lab.figures import plot_results

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
    with _lab_extra("reproduce"):
        from ..lab.recipes import RecipeError
        from ..lab.recipes import reproduce as run_recipe

    with _user_errors():
        try:
            path = run_recipe(paper, quick=quick, data_dir=data_dir, out=out, jobs=jobs, progress=True)
        except RecipeError as exc:
            raise CLIError(str(exc)) from None
    console.print(f"Report written to [bold]{escape(str(Path(path).resolve()))}[/]", soft_wrap=True)


from ..service.cli import register as _register_service  # noqa: E402  (serve, keys create, export-log)

_register_service(app)
from .vw import register as _register_vw  # noqa: E402  (train, predict, evaluate on VW text files)

_register_vw(app)

if __name__ == "__main__":  # pragma: no cover
    app()
