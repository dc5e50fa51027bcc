"""``nf.simulate``: the interaction loop (learner acts, channel answers, learner updates) and its Trace.

Randomness: ``SeedSequence(seed)`` spawns three streams — the order of rounds
(a fresh permutation of the rows for every pass over X; unused with
``shuffle=False``, which visits the rows in their given order), the feedback
channel's draws, and (only when the learner has ``seed=None``) the learner's
exploration.
The compiled loop consumes exactly the uniforms the public ``act``/``respond``
methods would draw, so it equals the plain-Python loop bit for bit (tested).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ._rows import simulation_rows
from ._validation import AnySeed, Integer, Options, check_labels, check_memory, check_param, check_targets, check_X
from .feedback import FeedbackChannel

__all__ = ["simulate", "fit_batch", "Trace", "log_checkpoints", "round_order", "RoundOrder", "simulate_catalogue"]

CHUNK_ROUNDS = 1 << 16


@dataclass(eq=False)
class Trace:
    """The record of one simulation.

    ``error_rate`` is the fraction of rounds whose greedy prediction (before the
    update) differed from the TRUE label; ``curve[i]`` is that fraction over the
    first ``checkpoints[i]`` rounds. ``wall_time`` is the loop's time in seconds,
    JIT compilation excluded.

    Regression learners (``feedback_kind == "target"``, e.g. NLMS, ORS): ``mse`` is the
    mean over all rounds of (ŷ − y)², ŷ the prediction made BEFORE the round's update and
    y the CLEAN target; ``error_rate`` equals ``mse`` and ``curve[i]`` is the MSE over the
    first ``checkpoints[i]`` rounds (so curves and tables work for both kinds);
    ``mistakes`` is 0. ``metrics`` holds ``labels_rate`` (noisy labels used per round),
    ``labels_curve`` (labels per round over the first ``checkpoints[i]`` rounds) and
    ``labels_total``. For classifiers ``mse`` is None.
    """

    learner: str
    feedback: str
    n_rounds: int
    seed: Any
    mistakes: int
    error_rate: float
    checkpoints: np.ndarray
    curve: np.ndarray
    wall_time: float
    metrics: dict = field(default_factory=dict)
    mse: float | None = None
    #: the learner's and the channel's class and parameter VALUES (`parameter_values`), set by the
    #: simulations: what ``==`` compares, so ``gamma=100`` and ``gamma=100.0`` are the same run
    spec: Any = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        """Equal in every field but ``wall_time``; the learner and the channel by their parameters' values
        (``spec``) when both traces carry them, else by their repr strings."""
        if not isinstance(other, Trace):
            return NotImplemented
        if self.spec is not None and other.spec is not None:
            same_setup = self.spec == other.spec
        else:
            same_setup = self.learner == other.learner and self.feedback == other.feedback
        return (
            same_setup
            and self.n_rounds == other.n_rounds
            and self.seed == other.seed
            and self.mistakes == other.mistakes
            and self.error_rate == other.error_rate
            and self.mse == other.mse
            and np.array_equal(self.checkpoints, other.checkpoints)
            and np.array_equal(self.curve, other.curve)
            and self.metrics.keys() == other.metrics.keys()
            and all(np.array_equal(self.metrics[k], other.metrics[k]) for k in self.metrics)
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def rounds_per_second(self) -> float:
        return self.n_rounds / self.wall_time if self.wall_time > 0 else float("inf")

    def to_dict(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "feedback": self.feedback,
            "n_rounds": self.n_rounds,
            "seed": self.seed,
            "mistakes": self.mistakes,
            "error_rate": self.error_rate,
            "checkpoints": self.checkpoints.tolist(),
            "curve": self.curve.tolist(),
            "wall_time": self.wall_time,
            **{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.metrics.items()},
            **({"mse": self.mse} if self.mse is not None else {}),
        }

    def __repr__(self) -> str:
        if self.mse is not None:
            return (
                f"Trace({self.learner} under {self.feedback}: mse={self.mse:.6g} "
                f"over {self.n_rounds} rounds, seed={self.seed}, {self.wall_time:.3f}s)"
            )
        return (
            f"Trace({self.learner} under {self.feedback}: error_rate={self.error_rate:.4f} "
            f"over {self.n_rounds} rounds, seed={self.seed}, {self.wall_time:.3f}s)"
        )


def log_checkpoints(n_rounds: int, num: int = 100) -> np.ndarray:
    """Log-spaced round counts 1..n_rounds (unique, always ending at n_rounds).

    >>> log_checkpoints(1000, num=4)
    array([   1,   10,  100, 1000])
    """
    pts = np.unique(np.round(np.geomspace(1, n_rounds, num=num)).astype(np.int64))
    return pts


class RoundOrder:
    """Rows for successive rounds: passes over 0..n-1, each a fresh permutation from ``rng``
    (``shuffle=False``: each pass in the given order 0, 1, …, n-1; ``rng`` is not used)."""

    def __init__(self, n_samples: int, rng: np.random.Generator, shuffle: bool = True):
        self.n_samples = n_samples
        self.rng = rng
        self.shuffle = shuffle
        self._perm = np.empty(0, dtype=np.int64)
        self._pos = 0

    def take(self, k: int) -> np.ndarray:
        out = np.empty(k, dtype=np.int64)
        filled = 0
        while filled < k:
            if self._pos == self._perm.shape[0]:
                self._perm = (self.rng.permutation(self.n_samples).astype(np.int64) if self.shuffle
                              else np.arange(self.n_samples, dtype=np.int64))
                self._pos = 0
            step = min(k - filled, self._perm.shape[0] - self._pos)
            out[filled:filled + step] = self._perm[self._pos:self._pos + step]
            filled += step
            self._pos += step
        return out


def round_order(n_samples: int, n_rounds: int, rng: np.random.Generator, shuffle: bool = True) -> np.ndarray:
    """All rows of a simulation at once (same sequence as the chunked loop uses)."""
    return RoundOrder(n_samples, rng, shuffle).take(n_rounds)


def simulation_streams(seed) -> tuple[np.random.Generator, np.random.Generator, np.random.SeedSequence]:
    """(order rng, feedback rng, learner fallback SeedSequence) of a simulation seed."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    s_order, s_feedback, s_learner = ss.spawn(3)
    return (
        np.random.Generator(np.random.PCG64(s_order)),
        np.random.Generator(np.random.PCG64(s_feedback)),
        s_learner,
    )


def simulate(
    learner,
    X,
    y,
    feedback: FeedbackChannel,
    n_rounds: int,
    seed: int | np.random.SeedSequence | None = None,
    checkpoints: np.ndarray | int = 100,
    progress: Callable[[int], None] | None = None,
    shuffle: bool = True,
) -> Trace:
    """Run ``n_rounds`` rounds of act -> feedback -> learn and return the `Trace`.

    The learner is trained in place (from whatever state it has). ``checkpoints``
    is a number of log-spaced checkpoints or an explicit increasing array of
    round counts. ``progress`` is called with the number of rounds done after
    each chunk of rounds. ``shuffle`` (default True): each pass over the rows is a
    fresh seeded permutation; ``shuffle=False`` visits the rows in their given order
    (0, 1, …, n−1, then again from 0), as time series (signals) must be processed.
    The feedback and learner draws do not depend on ``shuffle``.

    Regression learners (``feedback_kind == "target"``: NLMS, ORS) take float targets
    ``y`` (the clean targets; the MSE is measured against them) and a ``GaussianNoise``
    channel; each round draws a fixed number of standard normals (the learner's
    ``labels_per_round``), see `Trace` for what is recorded.

    One loop serves both kinds: a `_LabelRounds` or `_TargetRounds` object
    says how to check ``y``, which draws a chunk of rounds takes from the feedback stream,
    which compiled kernel runs it and what the Trace records.

    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=3)
    >>> t = nf.simulate(nf.Banditron(9, gamma=0.1, seed=0), X, y,
    ...                 feedback=nf.feedback.NoisyBandit(0, 0), n_rounds=20_000, seed=1)
    >>> t.n_rounds, t.curve.shape == t.checkpoints.shape
    (20000, True)
    """
    from .base import Learner

    if getattr(learner, "feedback_kind", None) == "catalogue":  # X: a CandidateStream (its ground truth), y: None
        if y is not None:
            raise TypeError(f"{type(learner).__name__} simulates on a CandidateStream (rounds of candidates with "
                            "their ground truth, e.g. nf.datasets.ranking_stream or multiclass_candidates), with "
                            "y=None.")
        return simulate_catalogue(learner, X, feedback, n_rounds, seed, checkpoints, progress)
    regression = isinstance(learner, Learner) and learner.feedback_kind == "target"
    if not isinstance(learner, Learner) or not hasattr(
            learner, "_simulate_targets" if regression else "_simulate_chunk"):
        raise TypeError(f"learner must be a noisyfeedback online learner; got {type(learner).__name__}.")
    if not isinstance(feedback, FeedbackChannel):
        raise TypeError(f"feedback must be a noisyfeedback.feedback channel; got {type(feedback).__name__}.")
    kind = (_TargetRounds if regression else _LabelRounds)(learner, feedback)
    check_param("n_rounds", n_rounds, Integer(1), "simulate")
    kind.allocate(n_rounds)
    check_param("seed", seed, AnySeed(), "simulate")
    check_param("shuffle", shuffle, Options((True, False)), "simulate")
    learner._validate_params()
    X = check_X(X, owner="simulate")
    if X.shape[0] == 0:
        raise ValueError("X of simulate has no rows.")
    y = kind.check_y(y, X.shape[0])
    cps = _checkpoint_array(checkpoints, n_rounds)
    kind.check_schedule()

    rng_order, rng_feedback, ss_learner = simulation_streams(seed)
    fitted = kind.fitted_features()
    if fitted is not None and fitted != X.shape[1]:
        raise ValueError(f"X of simulate has {X.shape[1]} features, but the learner was fitted with {fitted}.")
    learner._init_state(X.shape[1], ss_learner)
    k_learner = learner.draws_per_round
    t_rows = time.perf_counter()
    X = kind.rows(X)  # the kernel's view of X (classifiers: a mostly-zero dense X is read as CSR, same bits)
    t_rows = time.perf_counter() - t_rows
    kind.warm_up(X, y)  # JIT compilation on zero rounds (changes nothing)

    order = RoundOrder(X.shape[0], rng_order, shuffle)
    rng_learner = getattr(learner, "rng_", None)
    start = time.perf_counter()
    done = 0
    while done < n_rounds:
        k = min(CHUNK_ROUNDS, n_rounds - done)
        rows = order.take(k)
        u_learner = rng_learner.random(k * k_learner) if k_learner else np.zeros(0)
        kind.run_chunk(X, y, rows, u_learner, rng_feedback, done, k)
        done += k
        if progress is not None:
            progress(done)
    wall = time.perf_counter() - start + t_rows
    return Trace(
        learner=repr(learner),
        feedback=repr(feedback),
        spec=(parameter_values(learner), parameter_values(feedback)),
        n_rounds=int(n_rounds),
        seed=seed if not isinstance(seed, np.random.SeedSequence) else repr(seed),
        checkpoints=cps,
        wall_time=wall,
        **kind.results(cps, n_rounds),
    )


def parameter_values(obj: Any) -> Any:
    """A comparable record of an object's class and parameter values: numbers as floats, sequences and arrays
    of numbers by their float64 values (hashed), estimators (``get_params``) and plain objects (their ``__dict__``)
    recursively, anything else by its repr. ``SquareCB(3, gamma=100)`` and ``SquareCB(3, gamma=100.0)``
    give the same record; their repr strings differ."""
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (bool, np.bool_, int, float, np.integer, np.floating)):
        return float(obj)
    if isinstance(obj, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(obj, dtype=np.float64)
        except (TypeError, ValueError):
            return tuple(parameter_values(v) for v in obj)
        return ("array", arr.shape, hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest())
    if isinstance(obj, dict):
        return tuple(sorted((str(k), parameter_values(v)) for k, v in obj.items()))
    if hasattr(obj, "get_params"):
        try:
            params = obj.get_params(deep=False)
        except Exception:  # noqa: BLE001
            params = None
        if isinstance(params, dict):
            return (type(obj).__qualname__, parameter_values(params))
    state = {k: v for k, v in getattr(obj, "__dict__", {}).items() if not k.startswith("_")}
    if state and not callable(obj):
        return (type(obj).__qualname__, parameter_values(state))
    return repr(obj)


def _checkpoint_array(checkpoints, n_rounds: int) -> np.ndarray:
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        check_param("checkpoints", int(checkpoints), Integer(1), "simulate")
        return log_checkpoints(n_rounds, int(checkpoints))
    cps = np.asarray(checkpoints, dtype=np.int64)
    if cps.ndim != 1 or cps.size == 0 or (np.diff(cps) <= 0).any() or cps[0] < 1 or cps[-1] > n_rounds:
        raise ValueError("checkpoints must be increasing round counts in [1, n_rounds].")
    return cps


class _LabelRounds:
    """Classifiers (feedback kinds 'label', 'bandit', 'set'): ``learner._simulate_chunk``.

    A chunk of k rounds takes ``k * feedback.draws_per_round(K)`` uniforms from the feedback
    stream; the kernel writes 0/1 mistakes of the greedy prediction against the TRUE label
    (and any per-round ``learner.extra_metrics``, e.g. set misses).
    """

    def __init__(self, learner, feedback):
        if feedback.kind != learner.feedback_kind:
            raise TypeError(
                f"{type(learner).__name__} learns from {learner.feedback_kind!r} feedback, but "
                f"{feedback!r} gives {feedback.kind!r} feedback."
            )
        self.learner, self.feedback = learner, feedback
        self.extra_names = tuple(getattr(learner, "extra_metrics", ()))

    def allocate(self, n_rounds: int) -> None:
        check_memory(n_rounds * (1 + 8 * len(self.extra_names)), f"n_rounds={n_rounds} (the per-round record)")
        self.mistakes = np.empty(n_rounds, dtype=np.int8)
        self.extras = {name: np.empty(n_rounds, dtype=np.float64) for name in self.extra_names}

    def check_y(self, y, n_samples):
        return check_labels(y, self.learner.n_classes, n_samples=n_samples)

    def check_schedule(self) -> None:
        pass

    def fitted_features(self):
        if not hasattr(self.learner, "W_"):
            return None
        return getattr(self.learner, "n_features_", self.learner.W_.shape[1])  # of X, before any feature map

    def _extras_for(self, extras, a: int, b: int) -> dict:
        return {"extras": {name: extras[name][a:b] for name in self.extra_names}} if self.extra_names else {}

    def rows(self, X):
        scale = getattr(self.learner, "_simulation_rows", None)  # learners that normalise rows: see finite_scale_rows
        return simulation_rows(X if scale is None else scale(X), self.mistakes.shape[0])

    def warm_up(self, X, y) -> None:
        empty = {name: np.empty(0) for name in self.extra_names}
        self.learner._simulate_chunk(X, y, np.zeros(0, dtype=np.int64), np.zeros(0),
                                     self.feedback, np.zeros(0), np.zeros(0, np.int8),
                                     **self._extras_for(empty, 0, 0))

    def run_chunk(self, X, y, rows, u_learner, rng_feedback, done: int, k: int) -> None:
        k_feedback = self.feedback.draws_per_round(self.learner.n_classes)
        u_feedback = rng_feedback.random(k * k_feedback) if k_feedback else np.zeros(0)
        self.learner._simulate_chunk(X, y, rows, u_learner, self.feedback, u_feedback,
                                     self.mistakes[done:done + k], **self._extras_for(self.extras, done, done + k))
        finite = getattr(self.learner, "_state_is_finite", None)
        if finite is not None and not finite():
            raise ValueError(f"simulate: the learned state of {type(self.learner).__name__} became non-finite in "
                             f"rounds {done}..{done + k - 1} (an update overflowed; see the learner's parameters "
                             "and the scale of X).")

    def results(self, cps, n_rounds) -> dict:
        cum = np.cumsum(self.mistakes, dtype=np.int64)
        total = int(cum[-1])
        metrics = {}
        for name, values in self.extras.items():  # per-round metrics a learner reports (e.g. set misses)
            c = np.cumsum(values)
            metrics[f"{name}_rate"] = float(c[-1] / n_rounds)
            metrics[f"{name}_curve"] = c[cps - 1] / cps
        return {"mistakes": total, "error_rate": total / n_rounds, "curve": cum[cps - 1] / cps, "metrics": metrics}


class _TargetRounds:
    """Regression learners (feedback kind "target") under ``GaussianNoise``: ``learner._simulate_targets``.

    Round t (0-based, global in this simulation) uses the row ``order[t]``, the variance
    v_t = ``feedback.variance_at(t)`` and exactly ``learner.labels_per_round`` (k) standard
    normals from the feedback stream — all k are drawn even when the learner uses fewer,
    so the stream never depends on its decisions — and ``learner.draws_per_round``
    uniforms from the learner's ``rng_``. Both are pre-drawn per chunk of rounds, which
    reproduces the plain-Python loop (predict; ``feedback.respond(y, rng=..., rounds=[t],
    n_samples=k)``; ``learn(x, labels, variance=v_t, y_clean=y)``) bit for bit.
    """

    def __init__(self, learner, feedback):
        from .feedback import GaussianNoise

        if feedback.kind != learner.feedback_kind or not isinstance(feedback, GaussianNoise):
            raise TypeError(
                f"{type(learner).__name__} learns from noisy real-valued targets ('target' feedback, "
                f"GaussianNoise), but {feedback!r} gives {feedback.kind!r} feedback."
            )
        self.learner, self.feedback = learner, feedback

    def allocate(self, n_rounds: int) -> None:
        check_memory(n_rounds * 16, f"n_rounds={n_rounds} (the per-round record)")
        self.n_rounds = n_rounds
        self.sqerr = np.empty(n_rounds, dtype=np.float64)
        self.n_labels = np.empty(n_rounds, dtype=np.int64)

    def check_y(self, y, n_samples):
        return check_targets(y, n_samples=n_samples)

    def check_schedule(self) -> None:
        self.feedback.variance_at(np.array([0, self.n_rounds - 1]))  # fails early if the schedule is too short

    def fitted_features(self):
        return self.learner.w_.shape[0] if hasattr(self.learner, "w_") else None

    def rows(self, X):
        return X

    def warm_up(self, X, y) -> None:
        empty_f = np.zeros(0)
        self.learner._simulate_targets(X, y, np.zeros(0, np.int64), empty_f, empty_f, empty_f, empty_f,
                                       np.zeros(0, np.int64))

    def run_chunk(self, X, y, rows, u_learner, rng_feedback, done: int, k: int) -> None:
        variances = np.ascontiguousarray(self.feedback.variance_at(np.arange(done, done + k)), dtype=np.float64)
        normals = rng_feedback.standard_normal(k * self.learner.labels_per_round)
        self.learner._simulate_targets(X, y, rows, u_learner, variances, normals, self.sqerr[done:done + k],
                                       self.n_labels[done:done + k])

    def results(self, cps, n_rounds) -> dict:
        cum = np.cumsum(self.sqerr)
        mse = float(cum[-1] / n_rounds)
        cum_labels = np.cumsum(self.n_labels)
        metrics = {
            "labels_rate": float(cum_labels[-1] / n_rounds),
            "labels_curve": cum_labels[cps - 1] / cps,
            "labels_total": int(cum_labels[-1]),
        }
        return {"mistakes": 0, "error_rate": mse, "curve": cum[cps - 1] / cps, "metrics": metrics, "mse": mse}


def fit_batch(model, X, y, feedback: FeedbackChannel | None = None, *, seed: int = 0, teachers: int = 10,
              evil: float = 0.2, test_fraction: float = 0.25) -> dict[str, Any]:
    """The batch counterpart of `simulate`: fit a batch learner on corrupted training labels and
    score it on held-out rows against the clean labels; returns a record (plain values).

    A label-noise learner (UMA, CorrectedLogisticRegression: tags family "label_noise"): the training
    labels are ``feedback.respond(y)`` (e.g. ConfusionNoise). A teacher learner (family "teachers"):
    labels y ∈ {−1, +1} from ``teachers`` random teachers, ``round(evil · teachers)`` of them flipping
    all their labels (Dekel & Shamir's protocol); ``feedback`` must be None. One seed draws the split,
    the noise and the teachers (independent streams of ``SeedSequence(seed)``).

    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.load("iris")
    >>> C = nf.feedback.symmetric_confusion(3, 0.2)
    >>> r = fit_batch(nf.UMA(confusion=C), X, y, nf.feedback.ConfusionNoise(C), seed=0)
    >>> r["n_train"], r["n_test"], 0 <= r["error_rate"] <= 1
    (112, 38, True)
    """
    from .registry import learner_tags

    role = "teachers" if learner_tags(model).family == "teachers" else "batch"
    if role == "teachers" and feedback is not None:
        raise ValueError(f"{type(model).__name__} learns from teachers' labels (teachers=, evil=), not from a "
                         "feedback channel.")
    if role == "batch" and feedback is None:
        raise ValueError(f"{type(model).__name__} is fitted on labels corrupted by a feedback channel; give one "
                         "(e.g. nf.feedback.ConfusionNoise).")
    channel = feedback
    s_split, s_noise, s_teachers = np.random.SeedSequence(seed).spawn(3)
    n = X.shape[0]
    perm = np.random.Generator(np.random.PCG64(s_split)).permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    if train.size == 0:
        raise ValueError(f"no training rows left with test_fraction = {test_fraction}.")
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


# ------------------------------------------------------------ candidate streams
def simulate_catalogue(learner: Any, stream: Any, feedback=None, n_rounds: int | None = None,
                       seed=None, checkpoints=100, progress=None) -> "Trace":
    """Run ``n_rounds`` rounds of act → clicks → learn on a `CandidateStream` (rounds in order, again
    from the first after the last) and return a `Trace`.

    Randomness (``SeedSequence(seed).spawn(4)``, the first three as `nf.simulate`): [1] the flips
    (one uniform a slot), [2] the learner's stream when its seed is None (one uniform a slot), [3] the
    clean clicks (one uniform a slot: click = 1[u < examination[slot]·rewards[item]]); [0] is unused
    (no shuffling: a stream's rounds are a sequence). ``feedback``: a ``NoisyBandit(rho0, rho1)`` with
    scalar rates (None: clean; per-action rates, which have no action on a stream whose candidates change,
    are refused unless all equal). The compiled loop equals the plain-Python loop act → clicks → learn bit
    for bit (tested).

    Trace: ``mistakes``/``error_rate`` count rounds whose greedy page is worth less than the best page
    (clean); ``metrics``: ``regret_rate`` (mean clean regret of the played page: the best page's expected
    clicks − the played page's), ``regret_curve``, ``clicks_rate`` (mean clean expected clicks per page).
    """
    from .catalogue import CandidateStream
    from .feedback import NoisyBandit

    if getattr(learner, "feedback_kind", None) != "catalogue":
        raise TypeError(f"learner must be a catalogue learner; got {type(learner).__name__}.")
    if not isinstance(stream, CandidateStream):
        raise TypeError(f"a catalogue simulation takes a CandidateStream; got {type(stream).__name__}.")
    feedback = NoisyBandit(0.0, 0.0) if feedback is None else feedback
    if type(feedback) is not NoisyBandit:
        raise TypeError(f"{type(learner).__name__} learns from clicks: NoisyBandit(rho0, rho1) feedback; got "
                        f"{feedback!r}.")
    r0, r1 = np.asarray(feedback.rho0, dtype=np.float64).ravel(), np.asarray(feedback.rho1, dtype=np.float64).ravel()
    if np.ptp(r0) > 0 or np.ptp(r1) > 0:
        raise ValueError(f"a catalogue simulation flips every click at one pair of rates: the candidates change "
                         f"from round to round, so per-action rates have no action to belong to; got {feedback!r}. "
                         "Give NoisyBandit(rho0, rho1) scalar rates.")
    rho0, rho1 = float(r0[0]), float(r1[0])
    check_param("n_rounds", n_rounds, Integer(1), "simulate")
    check_param("seed", seed, AnySeed(), "simulate")
    rounds = learner._check_rounds(stream.rounds, fitting=False)
    k = int(learner.n_slots)
    stream.examination_for(k)
    cps = _checkpoint_array(checkpoints, n_rounds)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    _, s_flip, s_learner, s_click = ss.spawn(4)
    rng_flip = np.random.Generator(np.random.PCG64(s_flip))
    rng_click = np.random.Generator(np.random.PCG64(s_click))
    learner._init_state(rounds, s_learner)
    mistakes = np.empty(n_rounds, np.int8)
    regret = np.empty(n_rounds)
    clicks = np.empty(n_rounds)
    z = np.zeros(0)
    learner._simulate_chunk(rounds, stream, np.zeros(0, np.int64), z, rho0, rho1, z, z, mistakes[:0], regret[:0],
                            clicks[:0])  # compile on zero rounds
    start = time.perf_counter()
    done = 0
    n = rounds.n_rounds
    while done < n_rounds:
        m = min(CHUNK_ROUNDS, n_rounds - done)
        rows = np.arange(done, done + m, dtype=np.int64) % n
        u_learner = learner.rng_.random(m * k)
        u_flip = rng_flip.random(m * k)
        u_click = rng_click.random(m * k)
        learner._simulate_chunk(rounds, stream, rows, u_learner, rho0, rho1, u_flip, u_click,
                                mistakes[done:done + m], regret[done:done + m], clicks[done:done + m])
        done += m
        if progress is not None:
            progress(done)
    wall = time.perf_counter() - start
    cum = np.cumsum(mistakes, dtype=np.int64)
    creg = np.cumsum(regret)
    return Trace(learner=repr(learner), feedback=repr(feedback), n_rounds=int(n_rounds),
                 spec=(parameter_values(learner), parameter_values(feedback)),
                 seed=seed if not isinstance(seed, np.random.SeedSequence) else repr(seed),
                 mistakes=int(cum[-1]), error_rate=float(cum[-1] / n_rounds), checkpoints=cps,
                 curve=cum[cps - 1] / cps, wall_time=wall,
                 metrics={"regret_rate": float(creg[-1] / n_rounds), "regret_curve": creg[cps - 1] / cps,
                          "clicks_rate": float(clicks.mean())})
