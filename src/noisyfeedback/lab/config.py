"""Experiment configs: a TOML file (or a dict) validated with pydantic v2.

The schema, by example (every key below exists; ``#`` marks the defaults)::

    name = "noisy-bandit-sweep"          # optional; used in titles
    description = ""                     # optional
    n_rounds = 20_000                    # rounds per task (an int >= 1)
    checkpoints = 50                     # # log-spaced checkpoints, or an explicit list of rounds (100)
    # seeds = [0, 1, 2]                  # a list of ints, or an int n meaning 0..n-1 ([0]); not with [selection]
    data_dir = "DATA"                    # optional; relative to the config file
    output = "results/sweep"             # optional; relative to the config file

    [[datasets]]                         # one table per dataset (or datasets = ["synsep", "digits"])
    name = "synsep"                      # a name of nf.datasets.catalog() or a file path
    n_samples = 5000                     # generated sets: rows to generate; others: first n rows
    seed = 0                             # generated sets: the data seed (0)
    normalize = false                    # unit-L2 rows (false)
    split = "train"                      # "train" | "test" | "all" ("train")
    # label = "SynSep", n_rounds = ..., n_classes = ..., params = {...} (extra loader kwargs)

    [[channels]]
    name = "FullLabel"                   # a class of nf.feedback (case-insensitive) or an alias (full, bandit, ...)

    [[channels]]
    name = "NoisyBandit"
    params = { rho0 = [0.0, 0.2], rho1 = [0.0, 0.4] }
    zip = [["rho0", "rho1"]]             # rho0 and rho1 vary together: (0, 0) and (0.2, 0.4)

    [[learners]]
    name = "Perceptron"                  # runs only with channels giving the feedback it learns from (FullLabel)

    [[learners]]
    name = "RCNBF"                       # a learner class of nf (case-insensitive)
    params = { gamma = [0.01, 0.05, 0.1] }
    match_channel = true                 # rho0, rho1 taken from the channel (or "$channel.rho0")
    # label = "RCNBF (known rates)", channels = ["NoisyBandit(0.2,0.4)"], kind = "online"

    [selection]                          # optional: choose a parameter on separate seeds
    param = "gamma"                      # or a list of names chosen jointly
    metric = "error_rate"                # ("error_rate")
    mode = "min"                         # "min" | "max" ("min")
    tuning_seeds = [100, 101]
    report_seeds = [0, 1, 2, 3, 4]       # replaces `seeds`

Any dataset option and any learner or channel parameter may be a list: the
runner takes the product of all lists (``zip`` groups vary together). To give a
parameter a literal list value (e.g. a confusion matrix), wrap it:
``C = { value = [[0.8, 0.2], [0.2, 0.8]] }``.

Structural errors (unknown or missing keys, wrong types) are reported here by
`load_config`; names, parameters and values are checked against the
library by `noisyfeedback.lab.plan.build_plan`. Both raise
`ConfigError`, whose message names every bad key path, e.g.
``learners[1].params.gamma``, and the allowed values.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from .._io import json_default as _json_default  # the package's one JSON encoder

__all__ = [
    "ConfigError",
    "ExperimentConfig",
    "DatasetSpec",
    "ChannelSpec",
    "LearnerSpec",
    "SelectionSpec",
    "load_config",
    "parse_config",
    "config_hash",
    "format_path",
]


class ConfigError(ValueError):
    """An invalid experiment config. ``errors`` lists (key path, message) pairs."""

    def __init__(self, errors: list[tuple[str, str]], source: str | None = None):
        self.errors = list(errors)
        self.source = source
        where = f" in {source}" if source else ""
        lines = [f"{path}: {msg}" if path else msg for path, msg in self.errors]
        head = f"invalid experiment config{where}"
        if len(lines) == 1:
            text = f"{head}: {lines[0]}"
        else:
            text = f"{head} ({len(lines)} errors):\n" + "\n".join(f"  - {ln}" for ln in lines)
        super().__init__(text)

    def __reduce__(self):
        return (type(self), (self.errors, self.source))


def format_path(loc: tuple | list) -> str:
    """``('learners', 1, 'params', 'gamma')`` -> ``'learners[1].params.gamma'``.

    >>> format_path(("learners", 1, "params", "gamma", 2))
    'learners[1].params.gamma[2]'
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


# ------------------------------------------------------------ value types
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _as_int(v: Any, what: str, low: int | None = None) -> int:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not _is_int(v):
        raise PydanticCustomError("int_type", "must be {what}; got {got}", {"what": what, "got": repr(v)})
    if low is not None and v < low:
        raise PydanticCustomError("int_range", "must be {what}; got {got}", {"what": what, "got": repr(v)})
    return v


def _int_ge(low: int, optional: bool = False):
    what = f"an int >= {low}"

    def validate(v: Any) -> Any:
        if v is None and optional:
            return None
        return _as_int(v, what, low)

    return Annotated[Any if optional else int, BeforeValidator(validate)]


def _rounds_that_fit():
    """n_rounds: an int >= 1 whose per-round record (9 bytes a round) fits in this machine's memory."""

    def validate(v: Any) -> Any:
        from .._validation import format_bytes, memory_limit

        v = _as_int(v, "an int >= 1", 1)
        limit = memory_limit()
        if 9 * v > limit:
            raise PydanticCustomError("int_range", "{got} rounds would need {need} of memory for the per-round "
                                      "record; this machine has {have}",
                                      {"got": v, "need": format_bytes(9 * v), "have": format_bytes(limit)})
        return v

    return Annotated[int, BeforeValidator(validate)]


def _axis(check, what: str, optional: bool = False):
    """A value or a non-empty list of values (a grid axis), each accepted by ``check``."""

    def validate(v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, list):
            if not v:
                raise PydanticCustomError("empty_axis", "an empty list: give {what} or a non-empty list of them",
                                          {"what": what})
            out = []
            for i, x in enumerate(v):
                try:
                    out.append(check(x))
                except (TypeError, ValueError):
                    raise PydanticCustomError(
                        "axis_item", "item [{i}] must be {what}; got {got}", {"i": i, "what": what, "got": repr(x)}
                    ) from None
            return out
        try:
            return check(v)
        except (TypeError, ValueError):
            raise PydanticCustomError("axis_type", "must be {what} or a list of them; got {got}",
                                      {"what": what, "got": repr(v)}) from None

    return Annotated[Any, BeforeValidator(validate)]


def _check_bool(v):
    if not isinstance(v, bool):
        raise TypeError
    return v


def _check_str(v):
    if not isinstance(v, str):
        raise TypeError
    return v


def _check_pos_int(v):
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not _is_int(v) or v < 1:
        raise ValueError
    return v


def _check_nonneg_int(v):
    if not _is_int(v) or v < 0:
        raise ValueError
    return v


def _check_split(v):
    if v not in ("train", "test", "all"):
        raise ValueError
    return v


def _seeds(v: Any) -> list[int]:
    if _is_int(v):
        if v < 1:
            raise PydanticCustomError("seeds", "an int n means seeds 0..n-1 and must be >= 1; got {got}", {"got": v})
        return list(range(v))
    if not isinstance(v, list) or not v:
        raise PydanticCustomError("seeds", "must be a non-empty list of ints >= 0 (or an int n for 0..n-1); got {got}",
                                  {"got": repr(v)})
    for i, s in enumerate(v):
        if not _is_int(s) or s < 0:
            raise PydanticCustomError("seeds", "item [{i}] must be an int >= 0; got {got}", {"i": i, "got": repr(s)})
    if len(set(v)) != len(v):
        dup = next(s for s in v if v.count(s) > 1)
        raise PydanticCustomError("seeds", "seed {dup} is listed twice", {"dup": dup})
    return list(v)


Seeds = Annotated[list[int], BeforeValidator(_seeds)]


def _checkpoints(v: Any) -> int | list[int]:
    if _is_int(v):
        if v < 1:
            raise PydanticCustomError("checkpoints", "must be an int >= 1 (a number of log-spaced checkpoints) "
                                      "or an increasing list of round counts; got {got}", {"got": v})
        return v
    if isinstance(v, list) and v and all(_is_int(x) and x >= 1 for x in v):
        if any(b <= a for a, b in zip(v, v[1:])):
            raise PydanticCustomError("checkpoints", "an explicit list of round counts must be increasing; got {got}",
                                      {"got": v})
        return list(v)
    raise PydanticCustomError("checkpoints", "must be an int >= 1 (a number of log-spaced checkpoints) or an "
                              "increasing list of round counts >= 1; got {got}", {"got": repr(v)})


Checkpoints = Annotated[Any, BeforeValidator(_checkpoints)]


def _zip_groups(v: Any) -> list[list[str]]:
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        v = [v]  # zip = ["rho0", "rho1"]: one group
    if not isinstance(v, list) or not all(isinstance(g, list) and len(g) >= 2 and all(isinstance(n, str) for n in g)
                                          for g in v):
        raise PydanticCustomError("zip", "must be a list of groups of >= 2 parameter names, e.g. "
                                  "zip = [[\"rho0\", \"rho1\"]]; got {got}", {"got": repr(v)})
    seen: set[str] = set()
    for g in v:
        for n in g:
            if n in seen:
                raise PydanticCustomError("zip", "parameter {n!r} is in more than one zip group", {"n": n})
            seen.add(n)
    return v


ZipGroups = Annotated[list[list[str]], BeforeValidator(_zip_groups)]


def _param_table(v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise PydanticCustomError("params", "must be a table of parameter = value (e.g. params = {{ gamma = 0.05 }}); "
                                  "got {got}", {"got": repr(v)})
    return v


Params = Annotated[dict[str, Any], BeforeValidator(_param_table)]


def _str_or_list(v: Any) -> list[str]:
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
        return list(v)
    raise PydanticCustomError("names", "must be a name or a non-empty list of names; got {got}", {"got": repr(v)})


# ------------------------------------------------------------------ models
class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=False)


def _named(v: Any) -> Any:
    """Allow the shorthand "synsep" for { name = "synsep" }."""
    return {"name": v} if isinstance(v, str) else v


class DatasetSpec(_Model):
    """A dataset (one table of ``[[datasets]]``)."""

    name: str
    label: str | None = None
    split: _axis(_check_split, "one of 'train', 'test', 'all'") = "train"
    normalize: _axis(_check_bool, "true or false") = False
    n_samples: _axis(_check_pos_int, "an int >= 1", optional=True) = None
    seed: _axis(_check_nonneg_int, "an int >= 0", optional=True) = None
    n_rounds: _int_ge(1, optional=True) = None
    n_classes: _int_ge(2, optional=True) = None
    data_dir: str | None = None
    params: Params = Field(default_factory=dict)
    zip: ZipGroups = Field(default_factory=list)


class ChannelSpec(_Model):
    """A feedback channel (one table of ``[[channels]]``)."""

    name: str
    label: str | None = None
    params: Params = Field(default_factory=dict)
    zip: ZipGroups = Field(default_factory=list)


class LearnerSpec(_Model):
    """A learner (one table of ``[[learners]]``)."""

    name: str
    label: str | None = None
    kind: Literal["online", "batch"] | None = None
    params: Params = Field(default_factory=dict)
    zip: ZipGroups = Field(default_factory=list)
    match_channel: bool = False
    channels: Annotated[list[str], BeforeValidator(_str_or_list)] | None = None


class SelectionSpec(_Model):
    """Hyperparameter selection on tuning seeds, then runs on report seeds with the chosen values."""

    param: Annotated[list[str], BeforeValidator(_str_or_list)]
    metric: str = "error_rate"
    mode: Literal["min", "max"] = "min"
    tuning_seeds: Seeds
    report_seeds: Seeds
    #: values tried past the grid's edge, at most, per tuned group, while the best sits on that edge
    #: (0: the grid as given); see `noisyfeedback.experiments.grids`
    extend: Annotated[int, Field(ge=0, le=20)] = 0

    @field_validator("report_seeds")
    @classmethod
    def _disjoint(cls, v, info):
        tuning = info.data.get("tuning_seeds") or []
        common = sorted(set(tuning) & set(v))
        if common:
            raise PydanticCustomError(
                "disjoint", "must be disjoint from tuning_seeds (values are chosen on seeds separate from "
                "the reported ones); both contain {common}", {"common": common})
        return v


def _list_of(v: Any) -> Any:
    if isinstance(v, dict):
        return [v]  # a single [datasets] table
    if isinstance(v, list):
        return [_named(x) for x in v]
    return [_named(v)] if isinstance(v, str) else v


def _plain_name(v: Any) -> Any:
    """A config name is a file name (it names ./results/<name>): no path separator, not '.' or '..'."""
    if isinstance(v, str) and (not v.strip() or "/" in v or "\\" in v or "\0" in v or v.strip() in (".", "..")
                               or os.path.isabs(v) or v.startswith("~")):
        raise PydanticCustomError("name", "must be a plain name (it names the folder ./results/<name>): no '/', "
                                          "'\\', '..' or absolute path; got {got}", {"got": repr(v)})
    return v


class ExperimentConfig(_Model):
    """A whole experiment: datasets × channels × learners × their parameters × seeds."""

    name: Annotated[str | None, BeforeValidator(_plain_name)] = None
    description: str = ""
    n_rounds: _rounds_that_fit()
    checkpoints: Checkpoints = 100
    seeds: Seeds = Field(default_factory=lambda: [0])
    data_dir: str | None = None
    output: str | None = None
    datasets: Annotated[list[DatasetSpec], BeforeValidator(_list_of), Field(min_length=1)]
    channels: Annotated[list[ChannelSpec], BeforeValidator(_list_of), Field(min_length=1)]
    learners: Annotated[list[LearnerSpec], BeforeValidator(_list_of), Field(min_length=1)]
    selection: SelectionSpec | None = None


# ------------------------------------------------------------ error texts
def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The pydantic model a location points into (for listing allowed keys)."""
    model: Any = ExperimentConfig
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        model = _unwrap(field.annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _unwrap(tp: Any) -> Any:
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (list, Union) or str(origin) == "types.UnionType" or origin is type(int | None):
            args = [a for a in get_args(tp) if a is not type(None)]
            if not args:
                return tp
            tp = args[0]
        else:
            return tp


def _friendly(err: dict) -> tuple[str, str]:
    loc = tuple(err.get("loc", ()))
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        parent = _model_at(loc[:-1])
        allowed = ", ".join(parent.model_fields) if parent is not None else "?"
        return format_path(loc), f"unknown key {loc[-1]!r}; allowed keys here: {allowed}"
    if kind == "missing":
        return format_path(loc), "missing required key"
    if kind == "model_type" or kind == "model_attributes_type":
        return format_path(loc), f"must be a table of keys; got {err.get('input')!r}"
    msg = err.get("msg", "invalid value")
    if kind.startswith("literal_error"):
        msg = msg.replace("Input should be", "must be")
    elif kind in ("string_type",):
        msg = f"must be a string; got {err.get('input')!r}"
    elif kind in ("bool_type",):
        msg = f"must be true or false; got {err.get('input')!r}"
    elif kind in ("list_type",):
        msg = f"must be a list (an array of tables, [[...]]); got {err.get('input')!r}"
    elif kind == "too_short":
        msg = "must have at least one entry"
    elif kind == "value_error" and msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return format_path(loc), msg


def parse_config(data: dict[str, Any], source: str | None = None) -> ExperimentConfig:
    """Validate a config dict (as read from TOML); raise `ConfigError` naming each bad key path."""
    if isinstance(data, ExperimentConfig):
        return data
    if not isinstance(data, dict):
        raise ConfigError([("", f"a config is a table of keys; got {type(data).__name__}")], source)
    try:
        cfg = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError([_friendly(e) for e in exc.errors()], source) from None
    if cfg.selection is not None and "seeds" in cfg.model_fields_set:
        raise ConfigError([("seeds", "with a [selection] section the reported seeds are selection.report_seeds "
                                     "(and the tuning seeds selection.tuning_seeds); remove `seeds`")], source)
    return cfg


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """Read and validate a TOML experiment config (structure only; see ``build_plan`` for names and values)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"experiment config {str(path)!r} not found.")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([("", f"not valid TOML: {exc}")], str(path)) from None
    return parse_config(data, str(path))


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces): the basis of every hash here."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=_json_default)


def stable_hash(obj: Any, n: int = 16) -> str:
    """The first ``n`` hex digits of the SHA-256 of `canonical_json`."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:n]


def config_hash(cfg: ExperimentConfig) -> str:
    """A hash of everything in the config that can change results (not output paths or descriptions)."""
    data = cfg.model_dump(mode="json", exclude={"output", "data_dir", "description", "name"})
    if data.get("selection") and not data["selection"].get("extend"):
        data["selection"].pop("extend", None)  # a config without extension hashes as it did before it existed
    return stable_hash(data)
