"""The command line in Vowpal Wabbit's terms, registered on the main ``noisyfeedback`` CLI:
``train``, ``predict`` and ``evaluate`` on VW text files.

- ``noisyfeedback train --data train.vw --learner SquareCB --model model.npz`` — a catalogue learner
  (:class:`~noisyfeedback.CatalogueSquareCB` or :class:`~noisyfeedback.CatalogueEpsilonGreedy`, features
  hashed VW-style) trained on a ``--cb`` file (one example a line, each action a one-hot candidate)
  or a ``--cb_adf`` file (action-dependent features; detected from the content). Labels follow VW:
  ``index:cost:probability`` (cb, 1-based) and ``0:cost:probability`` on the chosen action's line
  (cb_adf); a click is cost −1, no click cost 0. ``--rho0/--rho1``: known flip rates of the clicks.
- ``noisyfeedback predict --data test.vw --model model.npz --predictions preds.txt`` — one line per
  example, the action distribution in VW's ``-p`` format for ``--cb_explore_adf``:
  ``index:probability`` pairs separated by commas (index counting the example's action lines from
  0), most probable first.
- ``noisyfeedback evaluate --data test.vw --model model.npz`` — off-policy estimates of the model's
  value (click rate) on a labelled log, with intervals (:func:`noisyfeedback.ope.evaluate_candidates`).

The model file is the learner's ``.npz``; next to it ``<model>.json`` records the file format (cb or
cb_adf), the number of actions of a cb file and the flip rates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

__all__ = ["register"]



def _meta_path(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def _fail(msg: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, highlight=False).print(f"[bold red]Error:[/] [red]{escape(msg)}[/]", soft_wrap=True)
    raise typer.Exit(2)


def _params(items: list[str] | None) -> dict[str, Any]:
    from .build import parse_params

    return parse_params(items, "--param")


def read_examples(path: Path, fmt: str | None = None, n_actions: int | None = None):
    """(format, ADF examples, K or None) of a VW file; ``fmt`` None: detected from the content."""
    from .datasets.vw_adf import detect_vw_format, read_vw_adf, read_vw_cb_as_adf

    if fmt is None:
        fmt = detect_vw_format(path)
    if fmt == "ccb":
        raise ValueError(f"{path}: a ccb (several slots) file; train/predict/evaluate take cb and cb_adf files.")
    if fmt == "cb":
        exs, K = read_vw_cb_as_adf(path, n_actions)
        return fmt, exs, K
    return fmt, read_vw_adf(path), None


def to_rounds(examples):
    """CandidateRounds (hashed features) of ADF examples."""
    from .catalogue import CandidateRounds

    return CandidateRounds.from_features([e.shared for e in examples], [e.actions for e in examples])


def clicks_of(examples, where: str) -> np.ndarray:
    """0/1 clicks from VW costs: −1 a click, 0 no click (anything else is an error)."""
    cost = np.array([e.label.cost for e in examples], dtype=np.float64)
    bad = (cost != -1.0) & (cost != 0.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{where}: labelled example {i} has cost {cost[i]!r}; costs must be -1 (a click) or 0 "
                         "(no click).")
    return (cost == -1.0).astype(np.int64)


def _learner(name: str, params: dict[str, Any], rho0: float, rho1: float):
    from . import build

    try:  # a catalogue learner, also by the name of its index counterpart (SquareCB)
        cls = build.catalogue_learner_class(name)
    except build.UnknownName as exc:
        hint = f" (did you mean {exc.suggestions[0]!r}?)" if exc.suggestions else ""
        raise ValueError(f"--learner must be a catalogue learner: {', '.join(exc.allowed)}; got {name!r}"
                         f"{hint}.") from None
    return build.build_learner(cls, **{**build.VW_LEARNER_DEFAULTS, **params, "rho0": rho0, "rho1": rho1})


def _load(model: Path):
    from .base import load

    meta_file = _meta_path(model)
    if not meta_file.is_file():
        raise FileNotFoundError(f"{meta_file}: the model's record (written by 'noisyfeedback train') is missing.")
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    learner = load(model)
    return learner, meta


def _labelled(examples, where: str):
    lab = [e for e in examples if e.label is not None]
    if not lab:
        raise ValueError(f"{where}: no labelled example (a '0:cost:probability' label on the chosen action's line, "
                         "or 'action:cost:probability' in a cb file).")
    return lab


# ------------------------------------------------------------------ commands
def train(
    data: Annotated[Path, typer.Option("--data", "-d", help="VW text: cb or cb_adf (detected from the content).")],
    model: Annotated[Path, typer.Option("--model", "-f", help="Where to write the model (.npz).")],
    learner: Annotated[str, typer.Option("--learner", help="SquareCB or EpsilonGreedy (the catalogue learners).")]
    = "SquareCB",
    rho0: Annotated[float, typer.Option("--rho0", help="Flip rate P(click seen | no click), if known.")] = 0.0,
    rho1: Annotated[float, typer.Option("--rho1", help="Flip rate P(no click seen | click), if known.")] = 0.0,
    passes: Annotated[int, typer.Option("--passes", help="Passes over the data, in order (VW's --passes).")] = 1,
    bits: Annotated[int, typer.Option("--bits", "-b", help="Hash table size 2^bits (VW's -b).")] = 18,
    interactions: Annotated[Optional[list[str]], typer.Option(
        "--quadratic", "-q", help="VW's -q: context × action namespaces by first letter (e.g. -q UA); "
                                  "default every pair.")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", help="Learner parameter NAME=VALUE.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="The learner's seed.")] = 0,
    fmt: Annotated[Optional[str], typer.Option("--format", help="cb or cb_adf (default: detected from the "
                                                               "content).")] = None,
) -> None:
    """Train a catalogue learner on a VW cb or cb_adf log (cost -1 = click, 0 = no click)."""
    try:
        if fmt not in (None, "cb", "cb_adf"):
            raise ValueError(f"--format must be cb or cb_adf; got {fmt!r}.")
        fmt, exs, K = read_examples(data, fmt)
        lab = _labelled(exs, str(data))
        clicks = clicks_of(lab, str(data))
        params = {"bits": bits, **_params(param), "seed": seed}
        if interactions:
            params["interactions"] = tuple(interactions)
        if passes < 1:
            raise ValueError(f"--passes must be >= 1; got {passes}.")
        lrn = _learner(learner, params, rho0, rho1)
        rounds = to_rounds(lab)
        actions = np.array([e.label.index for e in lab], dtype=np.int64)
        props = np.array([e.label.probability for e in lab], dtype=np.float64)
        for _ in range(passes):
            lrn.learn(rounds, actions, clicks, props)
        out = lrn.save(model)
        meta = {"format": fmt, "n_actions": K, "rho0": rho0, "rho1": rho1, "learner": type(lrn).__name__,
                "examples": len(lab), "passes": passes}
        _meta_path(out).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    except (ValueError, TypeError, FileNotFoundError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"{type(lrn).__name__} trained on {len(lab)} {fmt} examples ({int(clicks.sum())} clicks) × {passes} "
               f"pass(es) -> {out}")


def format_distribution(p: np.ndarray) -> str:
    """VW's ``-p`` line for ``--cb_explore_adf``: ``index:probability`` pairs, most probable first
    (ties by index).

    >>> format_distribution(np.array([0.1, 0.7, 0.2]))
    '1:0.7,2:0.2,0:0.1'
    """
    order = np.argsort(-p, kind="stable")
    return ",".join(f"{int(i)}:{float(p[i]):.6g}" for i in order)


def predict(
    data: Annotated[Path, typer.Option("--data", "-d", help="VW text in the model's format (labels ignored).")],
    model: Annotated[Path, typer.Option("--model", "-i", help="A model written by 'noisyfeedback train'.")],
    predictions: Annotated[Path, typer.Option("--predictions", "-p", help="Where to write the distributions.")],
    greedy: Annotated[bool, typer.Option("--greedy", help="Put all the probability on the best-scored action "
                                                          "(no exploration).")] = False,
) -> None:
    """Write one line per example: the action distribution in VW's -p format (index:probability,...)."""
    try:
        lrn, meta = _load(model)
        _, exs, _ = read_examples(data, meta["format"], meta.get("n_actions"))
        rounds = to_rounds(exs)
        if greedy:
            best = lrn.predict(rounds)
            P = np.zeros(rounds.n_candidates)
            P[rounds.offsets[:-1] + best] = 1.0
        else:
            P = lrn.action_probabilities(rounds)
        o = rounds.offsets
        lines = [format_distribution(P[o[i]:o[i + 1]]) for i in range(rounds.n_rounds)]
        predictions.parent.mkdir(parents=True, exist_ok=True)
        predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except (ValueError, TypeError, FileNotFoundError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"{len(lines)} predictions -> {predictions}")


def evaluate(
    data: Annotated[Path, typer.Option("--data", "-d", help="A labelled VW log in the model's format.")],
    model: Annotated[Path, typer.Option("--model", "-i", help="A model written by 'noisyfeedback train'.")],
    policy: Annotated[str, typer.Option("--policy", help="explore (the distribution 'predict' writes) or greedy.")]
    = "explore",
    rho0: Annotated[Optional[float], typer.Option("--rho0", help="Flip rate of the log's clicks (default: "
                                                                 "the model's).")] = None,
    rho1: Annotated[Optional[float], typer.Option("--rho1", help="Flip rate of the log's clicks (default: "
                                                                 "the model's).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="1 - the intervals' level.")] = 0.05,
    as_json: Annotated[bool, typer.Option("--json", help="Print the estimates as JSON.")] = False,
) -> None:
    """Off-policy estimates of the model's click rate on a labelled log, with intervals."""
    from .ope import evaluate_candidates

    try:
        lrn, meta = _load(model)
        _, exs, _ = read_examples(data, meta["format"], meta.get("n_actions"))
        lab = _labelled(exs, str(data))
        clicks = clicks_of(lab, str(data)).astype(np.float64)
        r0 = float(meta.get("rho0", 0.0)) if rho0 is None else rho0
        r1 = float(meta.get("rho1", 0.0)) if rho1 is None else rho1
        rounds = to_rounds(lab)
        if policy == "greedy":
            best = lrn.predict(rounds)
            P = np.zeros(rounds.n_candidates)
            P[rounds.offsets[:-1] + best] = 1.0
        elif policy == "explore":
            P = lrn.action_probabilities(rounds)
        else:
            raise ValueError(f"--policy must be explore or greedy; got {policy!r}.")
        q = np.clip(lrn.decision_function(rounds), 0.0, 1.0)  # the model's own click estimate (observed scale)
        actions = np.array([e.label.index for e in lab], dtype=np.int64)
        props = np.array([e.label.probability for e in lab], dtype=np.float64)
        res = {}
        for e in ("ips", "snips", "dr", "sndr", "dm"):
            res[e] = evaluate_candidates(rounds.offsets, actions, props, clicks, P, e, q, rho0=r0, rho1=r1,
                                         alpha=alpha)
        # the logging policy's own click rate (on-policy mean, corrected)
        logged = evaluate_candidates(np.arange(len(lab) + 1), np.zeros(len(lab), np.int64), np.ones(len(lab)),
                                     clicks, np.ones(len(lab)), "ips", rho0=r0, rho1=r1, alpha=alpha)
    except (ValueError, TypeError, FileNotFoundError, OSError) as exc:
        _fail(str(exc))
    rows = [(name, est) for name, est in res.items()] + [("logged policy", logged)]
    if as_json:
        typer.echo(json.dumps({name: {"value": est.value, "lower": est.lower, "upper": est.upper,
                                      "interval": est.interval} for name, est in rows}, indent=1))
        return
    level = f"{100 * (1 - alpha):g}%"
    typer.echo(f"{type(lrn).__name__} ({policy}) on {len(lab)} logged examples, clicks corrected for "
               f"rho0={r0:g}, rho1={r1:g}; {level} intervals:")
    for name, est in rows:
        iv = "(no interval: the reward model is held fixed)" if est.interval == "none" else \
            f"[{est.lower:.4f}, {est.upper:.4f}]"
        typer.echo(f"  {name:<14} {est.value:.4f}  {iv}")


def register(app: typer.Typer) -> None:
    """Add ``train``, ``predict`` and ``evaluate`` to the main CLI."""
    app.command("train")(train)
    app.command("predict")(predict)
    app.command("evaluate")(evaluate)
