"""From a validated config to a plan of tasks: name resolution, grid expansion, checks, task identities.

A *task* is one (dataset, channel, learner, parameters, seed): a small plain dict
(JSON-able, cheap to send to a worker) whose *identity* — everything that
determines its result — is hashed into its ``task_id``. The identity holds
names and parameter values, never paths, worker ids or positions in the plan.

Everything is checked here, before any task runs: unknown names, unknown
parameters, values outside their allowed ranges (through the library's own
parameter constraints), learners with no channel giving the feedback they learn
from, ``$channel.x`` references to parameters a channel does not have, missing
data files. Every error names its key path (``learners[1].params.gamma[2]``).
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import build, registry
from .config import (
    ConfigError,
    ExperimentConfig,
    canonical_json,
    config_hash,
    format_path,
    stable_hash,
)
from .engine import KINDS  # the sweep's kinds are registered by .tasks, imported with the package

__all__ = [
    "Plan",
    "Unit",
    "build_plan",
    "learner_classes",
    "channel_types",
    "resolve_learner",
    "resolve_channel",
    "make_channel",
]

_REF = re.compile(r"^\$channel\.([A-Za-z_]\w*)$")
_PARAM_IN_MSG = re.compile(r"The '(\w+)' parameter")


_key = build.key  # the one lookup key of names (case, spaces, '-' and '_' ignored)


# ------------------------------------------------------------- learners
# Names are resolved and objects built by the build layer (`noisyfeedback.build`): the same learners,
# channels, aliases and datasets as the command line, the VW commands, the service and ``nf.load``.
def learner_classes() -> dict[str, type]:
    """Every learner class of `noisyfeedback.registry`, by lookup key (lower case, no '-', '_')."""
    return {build.key(name): cls for name, cls in registry.learner_classes().items()}


def resolve_learner(name: str) -> type:
    """The learner class called ``name`` (case-insensitive; '-', '_' and spaces ignored)."""
    return build.learner_class(name)


def _sweep_kinds() -> list[str]:
    """The task kinds a config's learners may name (those that run on a loaded data set)."""
    return [k for k, v in KINDS.items() if v.data]


def is_online(cls: type) -> bool:
    """Whether ``nf.simulate`` can run the learner (its tags say it is online)."""
    return registry.learner_tags(cls).online


def learner_kind(cls: type) -> str:
    """'online' for learners ``nf.simulate`` can run, else 'batch'."""
    return "online" if is_online(cls) else "batch"


def takes_n_classes(cls: type) -> bool:
    return "n_classes" in cls._get_param_names()


def _learner_param_names(cls: type) -> list[str]:
    return [n for n in cls._get_param_names() if n not in ("n_classes", "seed")]


def _required_params(cls: type) -> list[str]:
    sig = inspect.signature(cls.__init__)
    return [n for n in _learner_param_names(cls) if sig.parameters[n].default is inspect.Parameter.empty]


def _normalize_learner_value(cls: type, name: str, value: Any) -> Any:
    """Ints given for real-valued parameters become floats, so 0 and 0.0 are one task."""
    from .._validation import Interval

    c = getattr(cls, "_parameter_constraints", {}).get(name)
    if isinstance(c, Interval) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if c is None:
        default = inspect.signature(cls.__init__).parameters.get(name)
        if default is not None and isinstance(default.default, float) and isinstance(value, int) \
                and not isinstance(value, bool):
            return float(value)
    return value


# ------------------------------------------------------------- channels
@dataclass(frozen=True)
class ChannelType:
    """A feedback channel the configs can name: its class, parameters and a builder."""

    name: str
    cls: type
    params: tuple[str, ...]
    defaults: dict[str, Any]
    build: Callable[..., Any]  # build(n_classes, **params) -> channel

    @property
    def kind(self) -> str:
        return self.cls.kind


def channel_types() -> dict[str, ChannelType]:
    """The feedback channels of the catalogue by lookup key, aliases (full, bandit, ...) included."""
    classes = registry.channel_classes()
    out: dict[str, ChannelType] = {}
    for name, cls in classes.items():
        params = registry.channel_params(cls)
        defaults = {p: d for p, d in params.items() if d is not inspect.Parameter.empty}

        def make(n_classes, _cls=cls, **kwargs):
            return build.build_channel(_cls, n_classes, **kwargs)

        out[build.key(name)] = ChannelType(name, cls, tuple(params), defaults, make)
    for alias, target in registry.CHANNEL_ALIASES.items():
        out.setdefault(build.key(alias), out[build.key(target)])
    return out


def resolve_channel(name: str) -> ChannelType:
    """The channel type called ``name`` (its aliases included; `noisyfeedback.build.UnknownName`
    with a "did you mean" otherwise)."""
    return channel_types()[build.key(build.channel_class(name).__name__)]


def make_channel(name: str, params: dict[str, Any], n_classes: int | None):
    """Build a channel from its config name and (resolved) parameters."""
    ct = resolve_channel(name)
    return ct.build(n_classes, **params)


def _normalize_channel_value(ct: ChannelType, name: str, value: Any) -> Any:
    if isinstance(ct.defaults.get(name), float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# ---------------------------------------------------------- grid expansion
class _Errors:
    def __init__(self):
        self.items: list[tuple[str, str]] = []

    def add(self, loc, msg: str) -> None:
        path = format_path(loc) if isinstance(loc, (tuple, list)) else loc
        if (path, msg) not in self.items:
            self.items.append((path, msg))

    def __bool__(self) -> bool:
        return bool(self.items)


def _literal(v: Any) -> tuple[bool, Any]:
    """({value = X} -> literal X)."""
    if isinstance(v, dict) and set(v) == {"value"}:
        return True, v["value"]
    return False, v


def expand_grid(values: dict[str, Any], zips: list[list[str]], loc: tuple, errors: _Errors,
                zip_loc: tuple | None = None) -> list[dict[str, Any]]:
    """All combinations: lists are axes (product), ``zips`` groups vary together; ``{value = X}`` is literal X.

    >>> e = _Errors()
    >>> for combo in expand_grid({"rho0": [0, 0.2], "rho1": [0, 0.4], "g": [1, 2]}, [["rho0", "rho1"]], (), e):
    ...     print(combo)
    {'rho0': 0, 'rho1': 0, 'g': 1}
    {'rho0': 0, 'rho1': 0, 'g': 2}
    {'rho0': 0.2, 'rho1': 0.4, 'g': 1}
    {'rho0': 0.2, 'rho1': 0.4, 'g': 2}
    """
    zip_loc = loc if zip_loc is None else zip_loc
    axes: list[tuple[tuple[str, ...], list[tuple]]] = []
    zipped = {n: gi for gi, g in enumerate(zips) for n in g}
    for gi, g in enumerate(zips):
        for n in g:
            if n not in values:
                errors.add(zip_loc + ("zip", gi), f"{n!r} is not a key here; keys: {', '.join(values) or '(none)'}")
    placed: set[int] = set()
    for name, raw in values.items():
        if name in zipped:
            gi = zipped[name]
            if gi in placed:
                continue
            placed.add(gi)
            group = [n for n in zips[gi] if n in values]
            lists = []
            for n in group:
                is_lit, v = _literal(values[n])
                if is_lit or not isinstance(v, list):
                    errors.add(zip_loc + ("zip", gi), f"every parameter of a zip group must be a list; {n!r} is not")
                    lists = None
                    break
                lists.append([_literal(x)[1] for x in v])
            if lists is None:
                continue
            lengths = {len(x) for x in lists}
            if len(lengths) > 1:
                errors.add(zip_loc + ("zip", gi), "the lists of a zip group must have equal lengths; got "
                           + ", ".join(f"{n}: {len(x)}" for n, x in zip(group, lists)))
                continue
            axes.append((tuple(group), list(zip(*lists))))
            continue
        is_lit, v = _literal(raw)
        if isinstance(raw, dict) and not is_lit:
            errors.add(loc + (name,), "a table is not a parameter value; write {value = ...} for a literal "
                                      "list or matrix")
            continue
        if not is_lit and isinstance(v, list):
            if not v:
                errors.add(loc + (name,), "an empty list gives no values; give a value or a non-empty list")
                continue
            axes.append(((name,), [(_literal(x)[1],) for x in v]))
        else:
            axes.append(((name,), [(v,)]))
    combos = []
    for choice in itertools.product(*[vals for _, vals in axes]):
        combo: dict[str, Any] = {}
        for (names, _), vals in zip(axes, choice):
            combo.update(dict(zip(names, vals)))
        combos.append({n: combo[n] for n in values if n in combo})
    return combos


def _grid_names(values: dict[str, Any], zips: list[list[str]]) -> set[str]:
    """The names that take several values (lists and zip groups)."""
    out = set()
    for n, raw in values.items():
        is_lit, v = _literal(raw)
        if not is_lit and isinstance(v, list) and len(v) > 1:
            out.add(n)
    for g in zips:
        if any(n in out for n in g):
            out.update(g)
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return format(v, "g")
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[…]"
    return str(v)


_SYMBOLS = {"gamma": "γ", "rho0": "ρ0", "rho1": "ρ1", "lam": "λ", "eps": "ε", "alpha": "α", "beta": "β"}


def param_text(params: dict[str, Any], names=None) -> str:
    """``{'gamma': 0.05}`` -> ``'γ=0.05'``."""
    names = list(params) if names is None else [n for n in params if n in names]
    return " ".join(f"{_SYMBOLS.get(n, n)}={_fmt(params[n])}" for n in names)


# --------------------------------------------------------------- entities
@dataclass
class DatasetInstance:
    index: int
    label: str
    identity: dict[str, Any]
    load: dict[str, Any]
    n_classes: int | None
    n_rounds: int


@dataclass
class ChannelInstance:
    index: int
    spec_index: int
    ctype: ChannelType
    params: dict[str, Any]
    label: str


@dataclass
class LearnerCombo:
    spec_index: int
    cls: type
    kind: str
    name: str   # the learner's name in tables: its config label or class name
    label: str  # name plus the parameters that vary in its grid
    params: dict[str, Any]  # may hold "$channel.x" references
    selected: tuple[str, ...] = ()


@dataclass
class Unit:
    """One configuration: dataset × channel × learner with resolved parameters (every seed of it)."""

    dataset: DatasetInstance
    channel: ChannelInstance
    learner: LearnerCombo
    params: dict[str, Any]
    label: str
    group: str  # selection group: same dataset/channel/learner spec/non-selected params
    selected: dict[str, Any] | None  # values of the selected parameters (None: not tuned)

    def task(self, seed: int, n_rounds: int, checkpoints: int | list[int]) -> dict[str, Any]:
        identity = {
            "dataset": self.dataset.identity,
            "channel": {"name": self.channel.ctype.name, "params": self.channel.params},
            "learner": {"name": self.learner.cls.__name__, "kind": self.learner.kind, "params": self.params},
            "seed": int(seed),
            "n_rounds": int(n_rounds),
            "checkpoints": checkpoints,
        }
        task_id = stable_hash(identity)
        return {
            "task_id": task_id,
            "kind": "sweep",  # the engine's task kind (its function: "_func"); not part of the identity
            "_func": KINDS["sweep"].path,
            **identity,
            "load": self.dataset.load,
            "labels": {
                "dataset": self.dataset.label,
                "channel": self.channel.label,
                "learner": self.learner.name,
                "task": f"{self.dataset.label} / {self.channel.label} / {self.label} / seed {seed}",
            },
        }


@dataclass
class Plan:
    """The validated, expanded experiment: units (configurations) and seeds."""

    config: ExperimentConfig
    config_hash: str
    units: list[Unit]
    seeds: list[int]
    checkpoints: int | list[int]
    selection: Any = None
    base_dir: Path = field(default_factory=Path.cwd)
    #: per tuned group, the values added past the grid's edge so far (see `extension_units`)
    extended: dict[str, int] = field(default_factory=dict)

    def _tasks(self, units, seeds, phase):
        out = []
        for u in units:
            for s in seeds:
                t = u.task(s, u.dataset.n_rounds, self.checkpoints)
                out.append((t, {"phase": phase, "unit": u}))
        return out

    def tasks(self) -> list[tuple[dict, dict]]:
        """Without selection: every unit × seed, as (task, annotations)."""
        return self._tasks(self.units, self.seeds, "report")

    def tuned_units(self) -> list[Unit]:
        return [u for u in self.units if u.selected is not None]

    def tuning_tasks(self) -> list[tuple[dict, dict]]:
        return self._tasks(self.tuned_units(), self.selection.tuning_seeds, "tuning")

    def extension_units(self, chosen: dict[str, dict[str, Any]]) -> list[Unit]:
        """One new unit per tuned group whose chosen value sits on an edge of the values tried so far.

        Only groups that tune one real-valued parameter of positive values are extended, at most
        ``selection.extend`` values each; the next value is `next_value` past that edge,
        kept inside the parameter's open range (its ``_parameter_constraints`` interval). The new units
        join `units`; run their tuning tasks and choose again.
        """
        from .grids import next_value

        sel = self.selection
        if sel is None or not getattr(sel, "extend", 0):
            return []
        groups: dict[str, list[Unit]] = {}
        for u in self.units:
            if u.selected is not None:
                groups.setdefault(u.group, []).append(u)
        new: list[Unit] = []
        for group, members in groups.items():
            if len(members[0].selected) != 1 or self.extended.get(group, 0) >= sel.extend:
                continue
            (name,) = members[0].selected
            values = [u.selected[name] for u in members]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values) \
                    or all(isinstance(v, int) for v in values):
                continue
            ordered = sorted(float(v) for v in values)
            best = float(chosen[group][name])
            if len(ordered) > 1 and ordered[0] < best < ordered[-1]:
                continue
            side = "low" if len(ordered) > 1 and best == ordered[0] else "high"
            rule = getattr(members[0].learner.cls, "_parameter_constraints", {}).get(name)
            low, high = getattr(rule, "low", None), getattr(rule, "high", None)
            nxt = next_value(ordered, side, low=0.0 if low is None else low, high=high)
            if nxt is None or nxt in ordered:
                continue
            edge = min(members, key=lambda u: abs(float(u.selected[name]) - (ordered[0] if side == "low"
                                                                               else ordered[-1])))
            params = {**edge.params, name: nxt}
            shown = [n for n in edge.params if f"{_SYMBOLS.get(n, n)}=" in edge.label]
            label = f"{edge.learner.name} {param_text(params, shown)}".strip() if shown else edge.learner.name
            combo = replace(edge.learner, label=label, params={**edge.learner.params, name: nxt})
            new.append(replace(edge, learner=combo, params=params, label=label, selected={name: nxt}))
            self.extended[group] = self.extended.get(group, 0) + 1
        self.units.extend(new)
        return new

    def report_tasks(self, chosen: dict[str, dict[str, Any]]) -> list[tuple[dict, dict]]:
        """Untuned units, and per tuned group the unit with the chosen values, on the report seeds."""
        units = []
        for u in self.units:
            if u.selected is None:
                units.append(u)
            elif canonical_json(u.selected) == canonical_json(chosen[u.group]):
                units.append(u)
        return self._tasks(units, self.selection.report_seeds, "report")

    @property
    def n_tasks(self) -> int:
        if self.selection is None:
            return len(self.units) * len(self.seeds)
        tuned = self.tuned_units()
        groups = {u.group for u in tuned}
        untuned = len(self.units) - len(tuned)
        return len(tuned) * len(self.selection.tuning_seeds) + (len(groups) + untuned) * len(
            self.selection.report_seeds)


# ------------------------------------------------------------------ datasets
def _catalog() -> dict[str, dict[str, Any]]:
    from .. import datasets as ds

    out = {}
    for row in ds.catalog():
        out[_key(row["name"])] = row
        for a in row.get("aliases", []) or []:
            out[_key(a)] = row
    return out


def _path_like(name: str) -> bool:
    return "/" in name or os.sep in name or Path(name).suffix != ""


def _expand_datasets(cfg: ExperimentConfig, base_dir: Path, data_dir: str | None, errors: _Errors):
    """Every data set instance of the config, each checked (long: one check per option, every error kept
    with its key path rather than raised, so a config reports all its problems at once)."""
    catalog = _catalog()
    out: list[DatasetInstance] = []
    for i, spec in enumerate(cfg.datasets):
        loc = ("datasets", i)
        row = catalog.get(_key(spec.name))
        ddir = spec.data_dir or data_dir
        if ddir is not None and not Path(ddir).is_absolute():
            ddir = str((base_dir / ddir).resolve()) if spec.data_dir else str(Path(ddir).resolve())
        path = None
        if row is None:
            if not _path_like(spec.name):
                names = ", ".join(r["name"] for r in dict((r["name"], r) for r in catalog.values()).values())
                errors.add(loc + ("name",), f"unknown dataset {spec.name!r}; allowed: {names}, or a data file path "
                           "(.npz, .csv, .parquet, LIBSVM, ...)")
                continue
            p = Path(spec.name).expanduser()
            candidates = [p] if p.is_absolute() else [base_dir / p, Path.cwd() / p]
            if not p.is_absolute():
                from .. import datasets as ds

                candidates += [d / p for d in ds.data_dirs(ddir)]
            found = next((c for c in candidates if c.is_file()), None)
            if found is None:
                errors.add(loc + ("name",), f"data file {spec.name!r} not found; looked in "
                           + ", ".join(str(c.parent) for c in candidates))
                continue
            path = str(found.resolve())
            kind = "file"
            canonical = spec.name
        else:
            kind = row["kind"]
            canonical = row["name"]
        fields = {"split": spec.split, "normalize": spec.normalize, "n_samples": spec.n_samples, "seed": spec.seed}
        for k in spec.params:
            if k in fields or k in ("name", "data_dir", "label"):
                errors.add(loc + ("params", k), f"{k!r} is a dataset key, not a loader option; set it directly")
        if kind != "generated":
            if spec.seed is not None:
                gens = ", ".join(r["name"] for r in catalog.values() if r["kind"] == "generated")
                errors.add(loc + ("seed",), f"only generated datasets ({gens}) take a data seed; "
                                            f"{spec.name!r} is {kind}")
            if kind == "bundled" and spec.params:
                errors.add(loc + ("params",), f"bundled dataset {canonical!r} takes no loader options")
        else:
            from .. import datasets as ds

            gen = getattr(ds, canonical, None)
            if gen is not None:
                allowed = [p for p in inspect.signature(gen).parameters if p not in ("n_samples", "seed", "normalize")]
                for k in spec.params:
                    if k not in allowed:
                        errors.add(loc + ("params", k), f"unknown option of {canonical}; allowed: "
                                   f"{', '.join(allowed) or '(none)'}")
        values = dict(fields, **spec.params)
        combos = expand_grid(values, spec.zip, loc, errors)
        varying = _grid_names(values, spec.zip)
        base_label = spec.label or canonical
        for combo in combos:
            split = combo["split"]
            if row is not None and split == "test" and "test" not in (row.get("splits") or {}):
                errors.add(loc + ("split",), f"{canonical!r} has no test split; allowed: 'train', 'all'")
            if kind == "file" and row is not None:
                from .. import datasets as ds

                try:
                    ds.locate(canonical, split, ddir)
                except FileNotFoundError as exc:
                    errors.add(loc + ("name",), str(exc))
                except ValueError:
                    pass
            seed = combo["seed"]
            if kind == "generated" and seed is None:
                seed = 0
            identity = {
                "name": canonical,
                "split": split,
                "normalize": combo["normalize"],
                "n_samples": combo["n_samples"],
                "seed": seed,
                "params": {k: combo[k] for k in spec.params},
                "n_classes": spec.n_classes,
            }
            label = base_label
            vary = {k: combo[k] for k in values if k in varying}
            if vary:
                label = f"{base_label} [{', '.join(f'{k}={_fmt(v)}' for k, v in vary.items())}]"
            n_classes = spec.n_classes or (row["n_classes"] if row is not None else None)
            out.append(DatasetInstance(
                index=len(out), label=label, identity=identity,
                load={**identity, "kind": kind, "path": path, "data_dir": ddir},
                n_classes=n_classes, n_rounds=spec.n_rounds or cfg.n_rounds,
            ))
    _unique_labels(out)
    return out


def _unique_labels(items) -> None:
    seen: dict[str, int] = {}
    for it in items:
        seen[it.label] = seen.get(it.label, 0) + 1
    count: dict[str, int] = {}
    for it in items:
        if seen[it.label] > 1:
            count[it.label] = count.get(it.label, 0) + 1
            it.label = f"{it.label} #{count[it.label]}"


# ------------------------------------------------------------------ channels
def _channel_label(ct: ChannelType, params: dict[str, Any]) -> str:
    vals = [params.get(n, ct.defaults.get(n)) for n in ct.params]
    shown = [_fmt(v) for v in vals if v is not None and not isinstance(v, (list, tuple, np.ndarray, dict))
             and not callable(v)]
    return f"{ct.name}({','.join(shown)})" if shown else ct.name


def _expand_channels(cfg: ExperimentConfig, errors: _Errors, n_classes_hint: int | None):
    out: list[ChannelInstance] = []
    for j, spec in enumerate(cfg.channels):
        loc = ("channels", j)
        try:
            ct = resolve_channel(spec.name)
        except ValueError as exc:
            errors.add(loc + ("name",), str(exc))
            continue
        bad = [k for k in spec.params if k not in ct.params]
        for k in bad:
            errors.add(loc + ("params", k),
                       f"unknown parameter of {ct.name}; allowed: {', '.join(ct.params) or '(none)'}")
        if bad:
            continue
        combos = expand_grid(spec.params, spec.zip, loc + ("params",), errors, zip_loc=loc)
        varying = _grid_names(spec.params, spec.zip)
        for combo in combos:
            params = {k: _normalize_channel_value(ct, k, v) for k, v in combo.items()}
            # build once to check values (ConfusionNoise(noise=...) needs K: checked per dataset later)
            if not (ct.name == "ConfusionNoise" and "noise" in params and n_classes_hint is None):
                try:
                    ct.build(n_classes_hint or 2, **params)
                except (TypeError, ValueError) as exc:
                    m = _PARAM_IN_MSG.search(str(exc))
                    name = exc.param if isinstance(exc, build.BadParameter) else m.group(1) if m else None
                    where = loc + ("params",) + ((name,) if name in spec.params else ())
                    errors.add(where, str(exc))
                    continue
            if spec.label:
                label = spec.label
                if varying:
                    label += f" ({param_text(params, varying)})"
            else:
                label = _channel_label(ct, params)
            out.append(ChannelInstance(index=len(out), spec_index=j, ctype=ct, params=params, label=label))
    _unique_labels(out)
    return out


# ------------------------------------------------------------------ learners
def _check_value(cls: type, name: str, value: Any) -> str | None:
    from .._validation import check_param

    c = getattr(cls, "_parameter_constraints", {}).get(name)
    if c is None:
        return None
    try:
        check_param(name, value, c, cls.__name__)
    except (TypeError, ValueError) as exc:
        return f"{exc} Allowed: {c.describe()}." if "must be" not in str(exc) else str(exc)
    return None


def _expand_learners(cfg: ExperimentConfig, errors: _Errors, selected_names: list[str]):
    out: list[list[LearnerCombo]] = []
    for k, spec in enumerate(cfg.learners):
        loc = ("learners", k)
        try:
            cls = resolve_learner(spec.name)
        except ValueError as exc:
            errors.add(loc + ("name",), str(exc))
            out.append([])
            continue
        kind = spec.kind or learner_kind(cls)
        if kind == "online" and not is_online(cls):
            errors.add(loc + ("kind",), f"{cls.__name__} is not an online learner (nf.simulate cannot run it); "
                                        "allowed: 'batch'")
        elif kind not in _sweep_kinds():
            how = "its kind" if spec.kind is None else "kind"
            errors.add(loc + ("kind",), f"{cls.__name__}: {how} {kind!r} is not supported by the runner yet; "
                                        f"allowed kinds: {', '.join(sorted(_sweep_kinds()))}")
        allowed = _learner_param_names(cls)
        ok = True
        for name in spec.params:
            if name == "n_classes":
                errors.add(loc + ("params", name), "is set from the dataset; remove it")
                ok = False
            elif name == "seed":
                errors.add(loc + ("params", name), "each task's learner seed is derived from the top-level "
                                                   "`seeds`; remove it")
                ok = False
            elif name not in allowed:
                errors.add(loc + ("params", name), f"unknown parameter of {cls.__name__}; allowed: "
                                                   f"{', '.join(allowed) or '(none)'}")
                ok = False
        if not ok:
            out.append([])
            continue
        # per-value checks with the class's own constraints (precise paths)
        n_errors = len(errors.items)
        for name, raw in spec.params.items():
            is_lit, v = _literal(raw)
            items = list(enumerate(v)) if (not is_lit and isinstance(v, list)) else [(None, v)]
            for i, item in items:
                item = _literal(item)[1]
                if isinstance(item, str) and item.startswith("$"):
                    if not _REF.match(item):
                        errors.add(loc + ("params", name) + ((i,) if i is not None else ()),
                                   f"bad reference {item!r}; write \"$channel.<parameter>\", e.g. \"$channel.rho0\"")
                    continue
                msg = _check_value(cls, name, _normalize_learner_value(cls, name, item))
                if msg:
                    errors.add(loc + ("params", name) + ((i,) if i is not None else ()), msg)
        if len(errors.items) > n_errors:
            out.append([])
            continue
        n_errors = len(errors.items)
        combos = expand_grid(spec.params, spec.zip, loc + ("params",), errors, zip_loc=loc)
        if len(errors.items) > n_errors:
            out.append([])  # reported; no joint checks on values already known to be bad
            continue
        varying = _grid_names(spec.params, spec.zip)
        selected = tuple(n for n in spec.params if n in varying and (
            n in selected_names or any(n in g and any(s in g for s in selected_names) for g in spec.zip)))
        base = spec.label or cls.__name__
        lst = []
        for combo in combos:
            params = {n: _normalize_learner_value(cls, n, v) for n, v in combo.items()}
            shown = [n for n in params if n in varying]
            label = f"{base} {param_text(params, shown)}".strip() if shown else base
            lst.append(LearnerCombo(spec_index=k, cls=cls, kind=kind, name=base, label=label, params=params,
                                    selected=selected))
        out.append(lst)
    return out


def _resolve_refs(combo: LearnerCombo, spec, channel: ChannelInstance, loc, errors: _Errors) -> dict | None:
    params = {}
    cparams = {**{k: v for k, v in channel.ctype.defaults.items() if v is not None}, **channel.params}
    for name, v in combo.params.items():
        m = _REF.match(v) if isinstance(v, str) else None
        if m:
            ref = m.group(1)
            if ref not in cparams:
                errors.add(loc + ("params", name), f"{v!r}: channel {channel.label} has no parameter {ref!r}; "
                           f"it has: {', '.join(cparams) or '(none)'}")
                return None
            v = _normalize_learner_value(combo.cls, name, cparams[ref])
        params[name] = v
    if spec.match_channel:
        for name in _learner_param_names(combo.cls):
            if name not in params and name in cparams:
                params[name] = _normalize_learner_value(combo.cls, name, cparams[name])
    return params


def _joint_check(cls: type, params: dict, n_classes: int | None, loc, errors: _Errors) -> bool:
    if takes_n_classes(cls) and n_classes is None:
        return True  # checked when the task runs (the data set's classes are not known before loading it)
    try:
        learner = build.build_learner(cls, n_classes, **params)
        learner._validate_params()
    except (TypeError, ValueError) as exc:
        m = _PARAM_IN_MSG.search(str(exc))
        name = exc.param if isinstance(exc, build.BadParameter) else m.group(1) if m else None
        errors.add(loc + ("params",) + ((name,) if name and name != "n_classes" else ()), str(exc))
        return False
    return True


def _instance_kind(cls: type, params: dict, n_classes: int | None) -> str | None:
    """The feedback kind of ``cls(**params)`` (for classes whose kind depends on their parameters)."""
    try:
        K = n_classes if n_classes is not None else max(2, int(params.get("m", 1)) + 1)
        return build.build_learner(cls, K, **params).feedback_kind
    except (TypeError, ValueError):
        return None


_BASE_METRICS = ("error_rate", "mistakes")


def _allowed_metrics(classes) -> list[str]:
    out = list(_BASE_METRICS)
    for cls in classes:
        extra = getattr(cls, "extra_metrics", ())
        for m in (() if isinstance(extra, property) else extra):  # a property: it depends on the instance
            if f"{m}_rate" not in out:
                out.append(f"{m}_rate")
        if getattr(cls, "feedback_kind", None) == "target" and "mse" not in out:
            out.append("mse")
    return out


# ---------------------------------------------------------------------- plan
def build_plan(cfg: ExperimentConfig, base_dir: str | os.PathLike | None = None,
               data_dir: str | os.PathLike | None = None) -> Plan:
    """Resolve, expand and check a config; raise `ConfigError` listing every problem with its key path.

    Long on purpose: the checks run in one pass so that every problem of a config is collected and
    reported together, each with its key path."""
    base_dir = Path(base_dir) if base_dir is not None else Path.cwd()
    errors = _Errors()
    ddir = str(data_dir) if data_dir is not None else (
        str((base_dir / cfg.data_dir).resolve()) if cfg.data_dir else None)
    datasets = _expand_datasets(cfg, base_dir, ddir, errors)
    known_k = [d.n_classes for d in datasets if d.n_classes is not None]
    channels = _expand_channels(cfg, errors, known_k[0] if known_k else None)
    sel = cfg.selection
    selected_names = sel.param if sel is not None else []
    learners = _expand_learners(cfg, errors, selected_names)

    if isinstance(cfg.checkpoints, list):
        for d in datasets:
            if cfg.checkpoints[-1] > d.n_rounds:
                errors.add(("checkpoints",), f"round {cfg.checkpoints[-1]} is beyond n_rounds = {d.n_rounds} "
                                             f"of dataset {d.label}")

    # channel filters and feedback compatibility
    pairs: dict[int, list[ChannelInstance]] = {}
    for k, spec in enumerate(cfg.learners):
        if not learners[k]:
            continue
        cls = learners[k][0].cls
        wanted = getattr(cls, "feedback_kind", None)
        chans = channels
        if spec.channels is not None:
            names = {c.label for c in channels} | {cfg.channels[c.spec_index].label for c in channels
                                                   if cfg.channels[c.spec_index].label}
            for i, want in enumerate(spec.channels):
                if want not in names and _key(want) not in {_key(c.ctype.name) for c in channels}:
                    errors.add(("learners", k, "channels", i), f"no channel {want!r}; channels: "
                               f"{', '.join(sorted(names))}")
            chans = [c for c in channels if c.label in spec.channels
                     or cfg.channels[c.spec_index].label in spec.channels
                     or _key(c.ctype.name) in {_key(w) for w in spec.channels}]
        # a learner whose kind depends on its parameters (SquareCB: 'bandit' with m = 1, 'set' with m > 1)
        # lists every kind in ``feedback_kinds``; each unit is then checked against its channel below
        kinds = tuple(getattr(cls, "feedback_kinds", None) or (wanted,))
        fitting = [c for c in chans if c.ctype.kind in kinds]
        if channels and not fitting:
            gives = ", ".join(f"{c.label} gives {c.ctype.kind!r}" for c in chans) or "none selected"
            fits = sorted({t.name for t in channel_types().values() if t.kind == wanted})
            errors.add(("learners", k), f"{cls.__name__} learns from {wanted!r} feedback, which none of its "
                                        f"channels gives ({gives}); add a channel such as "
                                        f"{' or '.join(fits) or '(none available)'}")
        pairs[k] = fitting

    if sel is not None:
        all_params = {n for lst in learners for c in lst for n in _learner_param_names(c.cls)}
        tuned_any = set()
        for spec in cfg.learners:
            tuned_any |= (_grid_names(spec.params, spec.zip) & set(sel.param))
        for i, p in enumerate(sel.param):
            loc = ("selection", "param") + ((i,) if len(sel.param) > 1 else ())
            if p not in all_params:
                errors.add(loc, f"{p!r} is not a parameter of any learner; parameters: "
                                f"{', '.join(sorted(all_params)) or '(none)'}")
            elif p not in tuned_any:
                errors.add(loc, f"{p!r} is not given as a list (a grid to choose from) for any learner")
        metrics = _allowed_metrics([lst[0].cls for lst in learners if lst])
        if sel.metric not in metrics:
            errors.add(("selection", "metric"), f"unknown metric {sel.metric!r}; allowed: {', '.join(metrics)}")

    units: list[Unit] = []
    for d in datasets:
        for c in channels:
            for k, spec in enumerate(cfg.learners):
                if c not in pairs.get(k, []):
                    continue
                for combo in learners[k]:
                    loc = ("learners", k)
                    params = _resolve_refs(combo, spec, c, loc, errors)
                    if params is None:
                        continue
                    missing = [n for n in _required_params(combo.cls) if n not in params]
                    if missing:
                        errors.add(loc + ("params",), f"{combo.cls.__name__} needs {', '.join(missing)}: give "
                                   f"{'it' if len(missing) == 1 else 'them'} in params (or set match_channel = true "
                                   f"to take {'it' if len(missing) == 1 else 'them'} from a channel that has "
                                   f"{'it' if len(missing) == 1 else 'them'})")
                        continue
                    if not _joint_check(combo.cls, params, d.n_classes, loc, errors):
                        continue
                    if len(getattr(combo.cls, "feedback_kinds", None) or ()) > 1 and \
                            _instance_kind(combo.cls, params, d.n_classes) != c.ctype.kind:
                        continue  # e.g. SquareCB(m = 1) under Diluted(m): not this channel's learner
                    if c.ctype.name == "ConfusionNoise" and d.n_classes is not None:
                        try:
                            ch = c.ctype.build(d.n_classes, **c.params)
                            ch._kernel_args(d.n_classes)
                        except (TypeError, ValueError) as exc:
                            errors.add(("channels", c.spec_index, "params"), f"with dataset {d.label}: {exc}")
                            continue
                    selected = {n: params[n] for n in combo.selected} if combo.selected else None
                    others = {n: v for n, v in params.items() if n not in combo.selected}
                    group = stable_hash({"d": d.index, "c": c.index, "l": k, "p": others})
                    units.append(Unit(dataset=d, channel=c, learner=combo, params=params, label=combo.label,
                                      group=group, selected=selected))
    if errors:
        raise ConfigError(errors.items)
    seeds = list(sel.report_seeds) if sel is not None else list(cfg.seeds)
    plan = Plan(config=cfg, config_hash=config_hash(cfg), units=units, seeds=seeds,
                checkpoints=cfg.checkpoints, selection=sel, base_dir=base_dir)
    ids: dict[str, Unit] = {}
    for t, meta in (plan.tasks() if sel is None else plan.tuning_tasks() + plan.report_tasks(
            {u.group: u.selected for u in plan.tuned_units()})):
        u = meta["unit"]
        first = ids.setdefault(t["task_id"], u)
        if first is not u:
            a, b = first.learner.spec_index, u.learner.spec_index
            where = (("learners", b) if a != b else ("channels", u.channel.spec_index) if first.channel is not u.channel
                     else ("datasets", u.dataset.index))
            errors.add(where, f"computes the same tasks as {'learners[%d]' % a if a != b else 'another entry'} "
                              f"({t['labels']['task']}); remove the duplicate or change a parameter")
    if errors:
        raise ConfigError(errors.items)
    return plan


def describe_plan(plan: Plan) -> str:
    """A one-paragraph summary (for dry runs)."""
    ds = sorted({u.dataset.label for u in plan.units})
    ch = sorted({u.channel.label for u in plan.units})
    le = sorted({u.learner.cls.__name__ for u in plan.units})
    def n(k, word):
        return f"{k} {word}" + ("" if k == 1 else "s")

    return (f"{n(plan.n_tasks, 'task')}: {n(len(plan.units), 'configuration')} ({n(len(ds), 'dataset')}: "
            f"{', '.join(ds)}; {n(len(ch), 'channel')}: {', '.join(ch)}; learners: {', '.join(le)}) "
            + (f"× {n(len(plan.seeds), 'seed')}" if plan.selection is None else
               f"with {', '.join(plan.selection.param)} chosen on seeds {plan.selection.tuning_seeds}, "
               f"reported on {n(len(plan.selection.report_seeds), 'seed')}"))


def task_json(task: dict) -> str:
    return json.dumps(task, sort_keys=True)
