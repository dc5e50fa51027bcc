"""The command line in Vowpal Wabbit's terms, registered on the main ``noisyfeedback`` CLI:
``train``, ``predict`` and ``evaluate`` on VW text files of any size, read in chunks
(`noisyfeedback.datasets.vw_stream.stream_vw`: bounded memory, compiled parsing).

- ``noisyfeedback train --data train.vw --learner SquareCB --model model.npz`` — a catalogue learner
  (`CatalogueSquareCB` or `CatalogueEpsilonGreedy`, features
  hashed VW-style) trained on a ``--cb`` file (one example a line, each action a one-hot candidate;
  VW's multi-cost lines accepted) or a ``--cb_adf`` file (action-dependent features) — detected from
  the content, or ``--format``. Labels follow VW: ``action:cost:probability`` (cb, 1-based) and
  ``0:cost:probability`` on the chosen action's line (cb_adf). ``--passes`` re-reads the file.
- ``noisyfeedback predict --data test.vw --model model.npz --predictions preds.txt`` — VW's ``-p``
  output for ``--cb_explore_adf``: per example a line of ``index:probability`` pairs (index counting
  the example's action lines from 0, most probable first, 6 significant digits), then a blank line.
- ``noisyfeedback evaluate --data test.vw --model model.npz`` — off-policy estimates of the model's
  value on a labelled log, with normal intervals from one pass of running sums. A table log (Parquet or
  CSV files) is evaluated with an index learner's model, here or on a Dask cluster (``--scheduler``):
  `noisyfeedback.cli.table_logs`.

**Costs and rewards** (``--reward``): VW minimises cost, and so do these commands by default:
``--reward cost`` learns and reports the reward −cost, whatever the costs are. For click logs:
``--reward click`` reads cost −1 as a click and 0 as none (reward 1/0); ``--reward one-minus-cost``
reads VW's classic 0-good/1-bad costs as reward 1 − cost (costs in [0, 1]). Flip rates
(``--rho0/--rho1``: P(click seen | no click), P(no click seen | click)) correct clicks, so they need
rewards of 0 and 1.

The model file is the learner's ``.npz``; next to it ``<model>.json`` records the file format (cb or
cb_adf), the number of actions of a cb file, the reward mapping and the flip rates. A training run
whose model is not finite exits non-zero and writes nothing.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer

__all__ = ["register", "to_rounds", "REWARDS", "rewards_of", "format_distribution"]

#: --reward: how a logged cost becomes the reward learned and reported
REWARDS = ("cost", "click", "one-minus-cost")
#: the model record's marker
RECORD = "noisyfeedback VW model"
#: evaluate warns below this many labelled examples (the normal intervals are rough)
SMALL_LOG = 100


class _UserError(ValueError):
    pass


def _meta_path(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def _fail(msg: str) -> None:
    """One plain line on stderr (no markup: labels such as ``0:-1:0.5`` print as written), exit 2."""
    typer.echo(f"Error: {msg}", err=True)
    raise typer.Exit(2)


def _warn(msg: str) -> None:
    typer.echo(f"Warning: {msg}", err=True)


def _params(items: list[str] | None) -> dict[str, Any]:
    from ..build import parse_params

    return parse_params(items, "--param")


def _learner(name: str, params: dict[str, Any], rho0: float, rho1: float):
    from .. import build

    try:  # a catalogue learner, also by the name of its index counterpart (SquareCB)
        cls = build.catalogue_learner_class(name)
    except build.UnknownName as exc:
        hint = f" (did you mean {exc.suggestions[0]!r}?)" if exc.suggestions else ""
        raise ValueError(f"--learner must be a catalogue learner: {', '.join(exc.allowed)}; got {name!r}"
                         f"{hint}.") from None
    return build.build_learner(cls, **{**build.VW_LEARNER_DEFAULTS, **params, "rho0": rho0, "rho1": rho1})


def to_rounds(examples):
    """CandidateRounds (hashed features) of ADF or CCB examples (their shared and action features)."""
    from ..catalogue import CandidateRounds

    return CandidateRounds.from_features([e.shared for e in examples], [e.actions for e in examples])


def _num(x: float) -> str:
    """A number as a person wrote it (no numpy repr): 1, -1, 0.5, 1e+200."""
    return f"{float(x):g}"


def rewards_of(costs: np.ndarray, mode: str, where: str, first: int = 0) -> np.ndarray:
    """The rewards of logged costs under ``--reward`` (module doc); ``first``: the examples' number in
    the log, for messages."""
    c = np.asarray(costs, dtype=np.float64)
    if mode == "cost":
        return -c
    if mode == "click":
        bad = (c != -1.0) & (c != 0.0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _UserError(f"{where}: labelled example {first + i} has cost {_num(c[i])}; with --reward click "
                             "costs must be -1 (a click) or 0 (no click). For VW's 0-good/1-bad costs use "
                             "--reward one-minus-cost; for any other costs the default --reward cost.")
        return (c == -1.0).astype(np.float64)
    if mode == "one-minus-cost":
        bad = ~((c >= 0.0) & (c <= 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise _UserError(f"{where}: labelled example {first + i} has cost {_num(c[i])}; with --reward "
                             "one-minus-cost costs must be in [0, 1] (0 good, 1 bad).")
        return 1.0 - c
    raise _UserError(f"--reward must be one of {', '.join(REWARDS)}; got {mode!r}.")


def _check_model_path(model: Path) -> None:
    if model.is_dir() or str(model).endswith(("/", "\\")):
        raise _UserError(f"--model {model} is a directory; name the model file (e.g. {model / 'model.npz'}).")


def _check_finite(lrn, where: str) -> None:
    for name in ("weights_", "sum_sq_grad_", "exam_clicks_", "exam_scores_"):
        arr = getattr(lrn, name, None)
        if arr is not None and not np.isfinite(arr).all():
            raise _UserError(f"{where}: training diverged: the model's {name.rstrip('_')} are not finite (features "
                             "too large for the learning rate?); no model written.")


def _load(model: Path):
    """(learner, record) of a model written by ``train``; anything else is refused naming the file."""
    from ..base import load
    from ..learners.catalogue._base import CatalogueOracle

    meta_file = _meta_path(model)
    if not model.is_file():
        raise FileNotFoundError(f"{model}: no such model file (write one with 'noisyfeedback train').")
    if not meta_file.is_file():
        raise FileNotFoundError(f"{meta_file}: the model's record (written by 'noisyfeedback train') is missing.")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _UserError(f"{meta_file}: not a model record written by 'noisyfeedback train' (not JSON: {exc}).") \
            from None
    if not isinstance(meta, dict):
        raise _UserError(f"{meta_file}: not a model record written by 'noisyfeedback train' (a JSON "
                         f"{type(meta).__name__}, not an object).")
    fmt = meta.get("format")
    if fmt not in ("cb", "cb_adf", "ccb"):
        raise _UserError(f"{meta_file}: the record's format is {fmt!r}; models of 'noisyfeedback train' are cb, "
                         "cb_adf or ccb.")
    K = meta.get("n_actions")
    if fmt == "cb" and (isinstance(K, bool) or not isinstance(K, int) or K < 1):
        raise _UserError(f"{meta_file}: a cb model's record needs n_actions, an int >= 1; got {K!r}.")
    for key in ("rho0", "rho1"):
        v = meta.get(key, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
            raise _UserError(f"{meta_file}: {key} must be a number in [0, 1); got {v!r}.")
    if meta.get("reward", "click") not in REWARDS:
        raise _UserError(f"{meta_file}: reward must be one of {', '.join(REWARDS)}; got {meta.get('reward')!r}.")
    try:
        learner = load(model)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        raise _UserError(f"{model}: not a model written by 'noisyfeedback train' ({exc})") from None
    if not isinstance(learner, CatalogueOracle):
        raise _UserError(f"{model}: holds a {type(learner).__name__}, not a catalogue learner trained by "
                         "'noisyfeedback train'.")
    slots = int(learner.n_slots)
    # a ccb record names its slots (and only a ccb record does); every other model has one slot
    if (fmt == "ccb") != ("slots" in meta) or meta.get("slots", 1) != slots:
        raise _UserError(f"{meta_file}: the record's format {fmt!r} ({meta.get('slots', 1)!r} slots) does not "
                         f"match the model in {model.name} ({slots} slots).")
    if not hasattr(learner, "weights_"):
        raise _UserError(f"{model}: the learner is not trained.")
    return learner, meta


class _Progress:
    """Rows read and rows/s on stderr, at most every half second (only on a terminal unless forced)."""

    def __init__(self, enabled: bool | None, label: str):
        self.on = sys.stderr.isatty() if enabled is None else enabled
        self.label, self.rows, self.t0, self.last = label, 0, time.perf_counter(), 0.0

    def add(self, n: int) -> None:
        self.rows += n
        now = time.perf_counter()
        if self.on and now - self.last > 0.5:
            self.last = now
            rate = self.rows / max(now - self.t0, 1e-9)
            sys.stderr.write(f"\r{self.label}: {self.rows:,} rows, {rate:,.0f} rows/s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on and self.last:
            rate = self.rows / max(time.perf_counter() - self.t0, 1e-9)
            sys.stderr.write(f"\r{self.label}: {self.rows:,} rows, {rate:,.0f} rows/s\n")
            sys.stderr.flush()


def _chunks(data: Path, fmt: str | None, n_actions: int | None, chunk_rows: int):
    from ..datasets.vw_stream import stream_vw

    if fmt not in (None, "cb", "cb_adf", "ccb"):
        raise _UserError(f"--format must be cb, cb_adf or ccb; got {fmt!r}.")
    from ..datasets.vw_stream import detect_format

    fmt = detect_format(data) if fmt is None else fmt
    return fmt, (lambda: stream_vw(data, fmt, chunk_rows=chunk_rows, n_actions=n_actions))


def _labelled_part(chunk):
    lab = chunk.labelled
    if lab.all():
        return chunk.rounds, chunk.actions, chunk.costs, chunk.probabilities, chunk.start
    idx = np.flatnonzero(lab)
    if not idx.size:
        return None
    return (chunk.rounds.take(idx), chunk.actions[idx], chunk.costs[idx], chunk.probabilities[idx],
            chunk.start)


def _ccb_part(chunk, n_slots: int, where: str):
    """The examples of a ccb chunk whose every slot is labelled, as (rounds, chosen (n, S), costs (n, S),
    probabilities (n, S), their numbers in the log); an example with another number of slots than the
    model's is refused."""
    sa, sc, sp_, ns = chunk.slots
    if sa.shape[1] < n_slots:
        pad = n_slots - sa.shape[1]
        sa = np.pad(sa, ((0, 0), (0, pad)), constant_values=-1)
        sc, sp_ = np.pad(sc, ((0, 0), (0, pad))), np.pad(sp_, ((0, 0), (0, pad)))
    bad = ns != n_slots
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _UserError(f"{where}: ccb example {chunk.start + i} has {int(ns[i])} slots; the model has {n_slots} "
                         "(every example of a ccb log needs the same number of slots).")
    lab = (sa[:, :n_slots] >= 0).all(axis=1)
    idx = np.flatnonzero(lab)
    if not idx.size:
        return None
    rounds = chunk.rounds if lab.all() else chunk.rounds.take(idx)
    return rounds, sa[idx, :n_slots], sc[idx, :n_slots], sp_[idx, :n_slots], chunk.start + idx


def _drop_candidates(rounds, drop: np.ndarray):
    """The rounds without one candidate each (``drop``: its position in each round), and the map from the
    new flat item rows to the old ones."""
    from ..catalogue import CandidateRounds
    from ..hashing import HashedRows

    o = rounds.offsets
    keep = np.ones(rounds.n_candidates, bool)
    keep[o[:-1] + drop] = False
    rows = np.flatnonzero(keep)
    H = rounds.items
    lens = H.indptr[rows + 1] - H.indptr[rows]
    indptr = np.zeros(rows.shape[0] + 1, np.int64)
    np.cumsum(lens, out=indptr[1:])
    ent = np.repeat(H.indptr[rows] - indptr[:-1], lens) + np.arange(indptr[-1])
    items = HashedRows(indptr, H.hashes[ent], H.values[ent], H.ns[ent], H.namespaces)
    return CandidateRounds(rounds.context, items, o - np.arange(o.shape[0])), rows


def _slate(lrn, rounds, n_slots: int, greedy: bool, logged: np.ndarray | None = None):
    """Per slot: the candidates still open (their positions in the original rounds, flat) and the policy's
    distribution over them; each slot's candidate is removed before the next (the logged one when
    ``logged`` (n, S) is given, else the most probable: VW's -p for --ccb_explore_adf)."""
    out = []
    cur, where = rounds, np.arange(rounds.n_candidates)
    for s in range(n_slots):
        P = _distributions(lrn, cur, greedy)
        out.append((cur, where, P))
        if s + 1 == n_slots or (cur.sizes <= 1).any():
            break
        if logged is not None:
            # the logged candidate's position in the current (reduced) round
            pos = np.empty(cur.n_rounds, np.int64)
            target = rounds.offsets[:-1] + logged[:, s]
            for i in range(cur.n_rounds):
                seg = where[cur.offsets[i]:cur.offsets[i + 1]]
                pos[i] = int(np.flatnonzero(seg == target[i])[0])
        else:
            pos = np.array([int(np.argmax(P[cur.offsets[i]:cur.offsets[i + 1]])) for i in range(cur.n_rounds)])
        cur, rows = _drop_candidates(cur, pos)
        where = where[rows]
    return out


_ERRORS = (ValueError, TypeError, FileNotFoundError, OSError, MemoryError)
_NO_LABEL = ("no labelled example (a '0:cost:probability' label on the chosen action's line, or "
             "'action:cost:probability' in a cb file)")
_CHUNK = typer.Option("--chunk-rows", help="Examples read and processed at a time (memory ~ this).")
_PROGRESS = typer.Option("--progress/--no-progress", help="Rows and rows/s on stderr (default: on a terminal).")


# ------------------------------------------------------------------ commands
def train(
    data: Annotated[Path, typer.Option("--data", "-d", help="VW text: cb or cb_adf (detected from the content), "
                                                            "plain or gzip/bzip2/xz.")],
    model: Annotated[Path, typer.Option("--model", "-f", help="Where to write the model (.npz).")],
    learner: Annotated[str, typer.Option("--learner", help="SquareCB or EpsilonGreedy (the catalogue learners).")]
    = "SquareCB",
    reward: Annotated[str, typer.Option("--reward", help="How costs become rewards: cost (VW: reward = -cost, "
                                                         "any real cost), click (-1 click / 0 none), "
                                                         "one-minus-cost (0 good / 1 bad).")] = "cost",
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
    actions: Annotated[Optional[int], typer.Option("--actions", help="cb files: the number of actions (VW's "
                                                                     "--cb K); default the largest in the file.")]
    = None,
    chunk_rows: Annotated[int, _CHUNK] = 4096,
    progress: Annotated[Optional[bool], _PROGRESS] = None,
) -> None:
    """Train a catalogue learner on a VW cb or cb_adf log (VW's costs: minimised; see --reward)."""
    try:
        _check_model_path(model)
        if reward not in REWARDS:
            raise _UserError(f"--reward must be one of {', '.join(REWARDS)}; got {reward!r}.")
        if passes < 1:
            raise _UserError(f"--passes must be >= 1; got {passes}.")
        fmt, chunks = _chunks(data, fmt, actions, chunk_rows)
        K = None
        if fmt == "cb":
            from ..datasets.vw_stream import cb_actions

            K = actions if actions is not None else cb_actions(data)
            fmt, chunks = _chunks(data, fmt, K, chunk_rows)
        params = {"bits": bits, **_params(param), "seed": seed}
        if interactions:
            params["interactions"] = tuple(interactions)
        S = 1
        if fmt == "ccb":  # the multi-slot learner: as many slots as the log's first example
            first_chunk = next(iter(chunks()), None)
            S = int(first_chunk.slots[3][0]) if first_chunk is not None and first_chunk.n else 1
            params.setdefault("n_slots", S)
        lrn = _learner(learner, params, rho0, rho1)
        lrn._validate_params()
        S = int(lrn.n_slots)
        flips = bool(rho0 or rho1)
        bar = _Progress(progress, "train")
        n_lab = 0
        total = 0.0
        for _ in range(passes):
            n_lab = 0
            total = 0.0
            for chunk in chunks():
                bar.add(chunk.n)
                part = _ccb_part(chunk, S, str(data)) if fmt == "ccb" else _labelled_part(chunk)
                if part is None:
                    continue
                rounds, acts, costs, props, first = part
                first = int(first[0]) if fmt == "ccb" else first
                r = rewards_of(costs, reward, str(data), first)
                if flips and not np.isin(r, (0.0, 1.0)).all():
                    raise _UserError(f"{data}: the flip rates --rho0/--rho1 correct clicks (rewards 0 or 1); these "
                                     f"costs give other rewards under --reward {reward} (use --reward click for -1/0 "
                                     "costs, one-minus-cost for 0/1).")
                lrn.learn(rounds, acts, r, props)
                n_lab += acts.shape[0]
                total += float(r.sum())
        bar.close()
        if n_lab == 0:
            raise _UserError(f"{data}: {_NO_LABEL}.")
        _check_finite(lrn, str(data))
        out = lrn.save(model)
        meta = {"record": RECORD, "format": fmt, "n_actions": K, "reward": reward, "rho0": rho0, "rho1": rho1,
                "learner": type(lrn).__name__, "examples": n_lab, "passes": passes,
                **({"slots": S} if fmt == "ccb" else {})}
        _meta_path(out).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    except _ERRORS as exc:
        _fail(str(exc))
    typer.echo(f"{type(lrn).__name__} trained on {n_lab} {fmt} examples (mean reward {total / n_lab:.4g}, "
               f"--reward {reward}) × {passes} pass(es) -> {out}")


def format_distribution(p: np.ndarray) -> str:
    """VW's ``-p`` line for ``--cb_explore_adf``: ``index:probability`` pairs, most probable first
    (ties by index), probabilities with 6 significant digits as VW prints them.

    >>> format_distribution(np.array([0.1, 0.7, 0.2]))
    '1:0.7,2:0.2,0:0.1'
    """
    order = np.argsort(-p, kind="stable")
    return ",".join(f"{int(i)}:{float(p[i]):.6g}" for i in order)


def format_distributions(P: np.ndarray, offsets: np.ndarray) -> str:
    r"""`format_distribution` of every round of a chunk (round i: ``P[offsets[i]:offsets[i + 1]]``), each
    line followed by a blank line, as VW's ``-p`` writes them; the same bytes, formatted in one ``%``
    operation over the chunk instead of a Python loop per pair.

    >>> format_distributions(np.array([0.1, 0.7, 0.2, 0.5, 0.5]), np.array([0, 3, 5]))
    '1:0.7,2:0.2,0:0.1\n\n0:0.5,1:0.5\n\n'
    """
    o = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(o)
    if sizes.size == 0:
        return ""
    p = np.asarray(P, dtype=np.float64)[o[0]:o[-1]]
    k0 = int(sizes[0])
    args: list = [0] * (2 * p.size)
    if (sizes == k0).all():  # the same number of actions every round: one sort along the rows
        local = np.argsort(-p.reshape(sizes.size, k0), axis=1, kind="stable")
        args[0::2] = local.ravel().tolist()
        args[1::2] = np.take_along_axis(p.reshape(sizes.size, k0), local, axis=1).ravel().tolist()
        return (",".join(("%d:%.6g",) * k0) + "\n\n") * sizes.size % tuple(args)
    rid = np.repeat(np.arange(sizes.size), sizes)
    order = np.lexsort((-p, rid))  # by round, then most probable first; ties keep the index order (stable)
    args[0::2] = (order - (o[:-1] - o[0])[rid]).tolist()
    args[1::2] = p[order].tolist()
    lines = {k: ",".join(("%d:%.6g",) * k) + "\n\n" for k in np.unique(sizes).tolist()}
    return "".join(lines[k] for k in sizes.tolist()) % tuple(args)


def _distributions(lrn, rounds, greedy: bool) -> np.ndarray:
    if greedy:
        best = lrn.predict(rounds)
        P = np.zeros(rounds.n_candidates)
        P[rounds.offsets[:-1] + best] = 1.0
        return P
    return lrn.action_probabilities(rounds)


def _g(x: float) -> str:
    """``x`` in ``%g``, with −0 (a cost of 0 as a reward) written 0.

    >>> _g(-0.0), _g(-1.0), _g(0.25)
    ('0', '-1', '0.25')
    """
    return f"{x + 0.0:g}"


def _first_max(v: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """1 at each round's highest value (the first on ties, as ``predict``), 0 elsewhere; flat like ``v``.

    >>> _first_max(np.array([0.2, 0.7, 0.7, 0.1, 0.0]), np.array([0, 3, 5])).tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0]
    """
    top = np.maximum.reduceat(v, offsets[:-1])
    hits = np.flatnonzero(v == np.repeat(top, np.diff(offsets)))
    P = np.zeros(v.shape[0])
    P[hits[np.searchsorted(hits, offsets[:-1])]] = 1.0
    return P


def predict(
    data: Annotated[Path, typer.Option("--data", "-d", help="VW text in the model's format (labels ignored).")],
    model: Annotated[Path, typer.Option("--model", "-i", help="A model written by 'noisyfeedback train'.")],
    predictions: Annotated[Path, typer.Option("--predictions", "-p", help="Where to write the distributions.")],
    greedy: Annotated[bool, typer.Option("--greedy", help="Put all the probability on the best-scored action "
                                                          "(no exploration).")] = False,
    chunk_rows: Annotated[int, _CHUNK] = 4096,
    progress: Annotated[Optional[bool], _PROGRESS] = None,
) -> None:
    """Write VW's -p output: per example a line index:probability,... (most probable first), then a blank line."""
    try:
        lrn, meta = _load(model)
        _, chunks = _chunks(data, meta["format"], meta.get("n_actions"), chunk_rows)
        predictions.parent.mkdir(parents=True, exist_ok=True)
        bar = _Progress(progress, "predict")
        n = 0
        with open(predictions, "w", encoding="utf-8", newline="\n") as fh:
            for chunk in chunks():
                rounds = chunk.rounds
                o = rounds.offsets
                if meta["format"] == "ccb":  # VW: a line per slot over the actions still open, then a blank line
                    slate = _slate(lrn, rounds, int(lrn.n_slots), greedy)
                    text = []
                    for i in range(rounds.n_rounds):
                        for cur, where, P in slate:
                            lo, hi = cur.offsets[i], cur.offsets[i + 1]
                            p_, ids = P[lo:hi], where[lo:hi] - o[i]
                            order = np.argsort(-p_, kind="stable")
                            text.append(",".join(f"{int(ids[j])}:{float(p_[j]):.6g}" for j in order) + "\n")
                        text.append("\n")
                    fh.write("".join(text))
                else:
                    P = _distributions(lrn, rounds, greedy)
                    fh.write(format_distributions(P, o))
                n += rounds.n_rounds
                bar.add(rounds.n_rounds)
        bar.close()
    except _ERRORS as exc:
        _fail(str(exc))
    typer.echo(f"{n} predictions -> {predictions}")


def _vectors(lrn, rounds, greedy: bool, acts, props, hr, mode: str, r0: float, r1: float, flips: bool) -> np.ndarray:
    """Per round v = (w·h, w, DM, w·(h − q̂), h): w = π(logged)/propensity, h the (corrected) reward, q̂ the
    model's score of each candidate (clipped to [0, 1] for click rewards, corrected like h)."""
    if greedy:  # the distributions from the scores: each candidate scored once
        q = lrn.decision_function(rounds)
        P = _first_max(q, rounds.offsets)
    else:
        P, q = lrn.action_probabilities(rounds, return_scores=True)
    if mode != "cost":
        q = np.clip(q, 0.0, 1.0)
    hq = (q - r0) / (1.0 - r0 - r1) if flips else q
    flat = rounds.offsets[:-1] + acts
    w = P[flat] / props
    dm = np.add.reduceat(P * hq, rounds.offsets[:-1])
    return np.column_stack([w * hr, w, dm, w * (hr - hq[flat]), hr])


class _Sums:
    """Running sums of per-round vectors v and their products v vᵀ (one pass, any number of chunks)."""

    def __init__(self, k: int):
        self.n = 0
        self.s1 = np.zeros(k)
        self.s2 = np.zeros((k, k))

    def add(self, V: np.ndarray) -> None:
        self.n += V.shape[0]
        self.s1 += V.sum(axis=0)
        self.s2 += V.T @ V

    def mean(self, i: int) -> float:
        return float(self.s1[i] / self.n)

    def var(self, coef: np.ndarray) -> float:
        """The sample variance (ddof 1) of the per-round combination coef · v."""
        n = self.n
        if n < 2:
            return math.inf
        m = self.s1 / n
        cov = (self.s2 - n * np.outer(m, m)) / (n - 1)
        return max(float(coef @ cov @ coef), 0.0)


def _estimates(S: _Sums, alpha: float, r0: float, r1: float) -> dict:
    """IPS, SNIPS, DR, SNDR, DM and the logged policy's mean from the sums of
    v = (w·h, w, DM, w·(h − q̂), h) per round; normal intervals (delta method for the ratios)."""
    from statistics import NormalDist

    from ..ope import Estimate

    n = S.n
    z = NormalDist().inv_cdf(1 - alpha / 2)
    wbar = S.mean(1)
    out = {}

    def est(name, value, coef, interval="normal"):
        if interval == "none":
            lo = hi = value
        else:
            se = math.sqrt(S.var(np.asarray(coef, dtype=np.float64)) / n) if n >= 2 else math.inf
            lo, hi = value - z * se, value + z * se
        out[name] = Estimate(float(value), float(lo), float(hi), name, int(n), interval, float(alpha), r0, r1)

    est("ips", S.mean(0), [1, 0, 0, 0, 0])
    snips = S.s1[0] / S.s1[1] if S.s1[1] > 0 else 0.0
    est("snips", snips, np.array([1, -snips, 0, 0, 0]) / (wbar if wbar > 0 else 1.0))
    est("dr", S.mean(2) + S.mean(3), [0, 0, 1, 1, 0])
    c = S.s1[3] / S.s1[1] if S.s1[1] > 0 else 0.0
    est("sndr", S.mean(2) + c, np.array([0, -c / wbar if wbar > 0 else 0, 1, 1 / wbar if wbar > 0 else 0, 0]))
    est("dm", S.mean(2), [0, 0, 1, 0, 0], "none")
    logged = dict(out)
    est("logged policy", S.mean(4), [0, 0, 0, 0, 1])
    return {**logged, "logged policy": out["logged policy"]}


def evaluate(
    data: Annotated[Path, typer.Option("--data", "-d", help="A labelled VW log in the model's format, or a table log: "
                                                            "Parquet or CSV files (a file, a directory or a glob).")],
    model: Annotated[Path, typer.Option("--model", "-i", help="A model written by 'noisyfeedback train' (VW logs), or "
                                                              "an index learner's (learner.save, a service snapshot: "
                                                              "table logs).")],
    policy: Annotated[str, typer.Option("--policy", help="explore (the distribution 'predict' writes) or greedy.")]
    = "explore",
    reward: Annotated[Optional[str], typer.Option("--reward", help="cost, click or one-minus-cost (default: the "
                                                                   "model's).")] = None,
    rho0: Annotated[Optional[float], typer.Option("--rho0", help="Flip rate of the log's clicks (default: "
                                                                 "the model's).")] = None,
    rho1: Annotated[Optional[float], typer.Option("--rho1", help="Flip rate of the log's clicks (default: "
                                                                 "the model's).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="1 - the intervals' level.")] = 0.05,
    as_json: Annotated[bool, typer.Option("--json", help="Print the estimates as JSON.")] = False,
    chunk_rows: Annotated[int, _CHUNK] = 4096,
    progress: Annotated[Optional[bool], _PROGRESS] = None,
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", help="A Dask scheduler's address (tcp://host:8786): a table log's files are evaluated "
                            "there, one task a file (the same estimates as here).")] = None,
    column: Annotated[Optional[list[str]], typer.Option(
        "--column", help="ROLE=NAME: a table log's action, reward or propensity column (default: the role's "
                         "name; the service's export is recognised). Repeatable.")] = None,
    features: Annotated[Optional[str], typer.Option(
        "--features", help="A table log's feature columns, separated by commas (default: every other column).")]
    = None,
) -> None:
    """Off-policy estimates of the model's value (mean reward) on a labelled log, with intervals."""
    from .table_logs import is_table_log

    warnings: list[str] = []
    try:
        if policy not in ("explore", "greedy"):
            raise _UserError(f"--policy must be explore or greedy; got {policy!r}.")
        if not 0 < alpha < 1:
            raise _UserError(f"--alpha must be in (0, 1); got {alpha!r}.")
        if is_table_log(data):
            if reward is not None:
                raise _UserError("--reward maps a VW log's costs; a table log's rewards are read as they are.")
            return _evaluate_table(data, model, policy, rho0 or 0.0, rho1 or 0.0, alpha, scheduler, column,
                                   features, chunk_rows, as_json)
        if scheduler is not None or column or features is not None:
            raise _UserError("--scheduler, --column and --features are for table logs (Parquet or CSV files); "
                             f"{data} is a VW log.")
        lrn, meta = _load(model)
        mode = meta.get("reward", "click") if reward is None else reward
        if mode not in REWARDS:
            raise _UserError(f"--reward must be one of {', '.join(REWARDS)}; got {mode!r}.")
        r0 = float(meta.get("rho0", 0.0)) if rho0 is None else float(rho0)
        r1 = float(meta.get("rho1", 0.0)) if rho1 is None else float(rho1)
        _check_rates(r0, r1)
        flips = bool(r0 or r1)
        _, chunks = _chunks(data, meta["format"], meta.get("n_actions"), chunk_rows)
        S = _Sums(5)
        raw_sum, lo_r, hi_r = 0.0, math.inf, -math.inf
        bar = _Progress(progress, "evaluate")
        binary = True
        ccb = meta["format"] == "ccb"
        n_slots = int(lrn.n_slots)
        for chunk in chunks():
            bar.add(chunk.n)
            part = _ccb_part(chunk, n_slots, str(data)) if ccb else _labelled_part(chunk)
            if part is None:
                continue
            rounds, acts, costs, props, first = part
            r = rewards_of(costs, mode, str(data), int(first[0]) if ccb else first)
            binary = binary and bool(np.isin(r, (0.0, 1.0)).all())
            if flips and not binary:
                raise _UserError(f"{data}: the flip rates correct clicks (rewards 0 or 1); under --reward {mode} "
                                 "this log has other rewards.")
            raw_sum += float(r.sum())
            lo_r, hi_r = min(lo_r, float(r.min())), max(hi_r, float(r.max()))
            hr = (r - r0) / (1.0 - r0 - r1) if flips else r
            if not ccb:
                S.add(_vectors(lrn, rounds, policy == "greedy", acts, props, hr, mode, r0, r1, flips))
                continue
            # a page: each slot's terms over the actions the logged earlier slots left open, summed
            V = 0.0
            for s, (cur, where, _) in enumerate(_slate(lrn, rounds, n_slots, policy == "greedy", acts)):
                pos = np.array([int(np.flatnonzero(where[cur.offsets[i]:cur.offsets[i + 1]] ==
                                                   rounds.offsets[i] + acts[i, s])[0]) for i in range(cur.n_rounds)])
                V = V + _vectors(lrn, cur, policy == "greedy", pos, props[:, s], hr[:, s], mode, r0, r1, flips)
            S.add(V)
        bar.close()
        n = S.n
        if n == 0:
            raise _UserError(f"{data}: {_NO_LABEL}.")
        res = _estimates(S, alpha, r0, r1)
        if ccb:  # self-normalising a page's summed weights has no meaning: the linear estimators only
            res = {k: v for k, v in res.items() if k in ("ips", "dr", "dm", "logged policy")}
            raw_sum, lo_r, hi_r = raw_sum / n_slots, lo_r * n_slots, hi_r * n_slots
        if n < 2:
            warnings.append("1 labelled example: no interval (it needs at least 2, and a useful one hundreds).")
        elif n < SMALL_LOG:
            warnings.append(f"only {n} labelled examples: the normal intervals are rough below {SMALL_LOG}.")
        if flips:
            rate = raw_sum / n  # E[seen click] = rho0 + (1 - rho0 - rho1) P(click) is in [rho0, 1 - rho1]
            if rate < r0 or rate > 1 - r1:
                warnings.append(f"the log's click rate {rate:.4f} is outside [rho0, 1 - rho1] = [{r0:g}, {1 - r1:g}]"
                                f", which these flip rates imply: the corrected rewards are implausible (are the "
                                f"flip rates right?).")
            lo_ok, hi_ok = 0.0, 1.0
        else:
            lo_ok, hi_ok = (0.0, 1.0) if binary and mode != "cost" else (lo_r, hi_r)
        for name, e in res.items():
            if e.interval == "none" or name == "logged policy":
                continue
            if not (lo_ok - 1e-9 <= e.value <= hi_ok + 1e-9):
                warnings.append(f"the {name} estimate {e.value:.4g} is outside the rewards' range "
                                f"[{_g(lo_ok)}, {_g(hi_ok)}] (too few examples, or propensities/flip rates "
                                "wrong).")
        for w_ in warnings:
            _warn(w_)
    except _ERRORS as exc:
        _fail(str(exc))
    _print_estimates(f"{type(lrn).__name__} ({policy}) on {n} logged examples, reward by --reward {mode}", res,
                     alpha, as_json, r0, r1)


def _evaluate_table(data: Path, model: Path, policy: str, r0: float, r1: float, alpha: float,
                    scheduler: str | None, column: list[str] | None, features: str | None, chunk_rows: int,
                    as_json: bool) -> None:
    """``evaluate`` on a table log (`noisyfeedback.cli.table_logs`)."""
    from .table_logs import evaluate_table, table_options

    try:
        _check_rates(r0, r1)
        lrn, res = evaluate_table(data, model, policy == "greedy", r0, r1, alpha, scheduler,
                                  table_options(column, features), chunk_rows)
    except (*_ERRORS, ImportError) as exc:
        _fail(str(exc))
    n = next(iter(res.values())).n
    where = f" on the Dask cluster at {scheduler}" if scheduler else ""
    _print_estimates(f"{type(lrn).__name__} ({policy}) on {n} logged rows{where}, rewards as logged", res, alpha,
                     as_json, r0, r1)


def _check_rates(r0: float, r1: float) -> None:
    if not (0 <= r0 < 1 and 0 <= r1 < 1 and r0 + r1 < 1):
        raise _UserError(f"--rho0 and --rho1 must be in [0, 1) with rho0 + rho1 < 1; got {r0:g}, {r1:g}.")


def _print_estimates(head: str, res: dict, alpha: float, as_json: bool, r0: float, r1: float) -> None:
    """The estimates as text (``head``, the flip rates' correction when there is one, the level) or JSON."""
    rows = list(res.items())
    if as_json:
        typer.echo(json.dumps({name: {"value": est.value, "lower": est.lower, "upper": est.upper,
                                      "interval": est.interval} for name, est in rows}, indent=1))
        return
    level = f"{100 * (1 - alpha):g}%"
    corr = f", clicks corrected for rho0={r0:g}, rho1={r1:g}" if (r0 or r1) else ""
    typer.echo(f"{head}{corr}; {level} intervals:")
    for name, est in rows:
        iv = "(no interval: the reward model is held fixed)" if est.interval == "none" else \
            f"[{est.lower:.4f}, {est.upper:.4f}]"
        typer.echo(f"  {name:<14} {est.value:.4f}  {iv}")


def register(app: typer.Typer) -> None:
    """Add ``train``, ``predict`` and ``evaluate`` to the main CLI."""
    app.command("train")(train)
    app.command("predict")(predict)
    app.command("evaluate")(evaluate)
