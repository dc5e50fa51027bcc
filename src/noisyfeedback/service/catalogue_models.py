"""The learners of an action-feature service: the catalogue family, found by name (a catalogue learner, or
the catalogue twin of an index learner) and built with hashed features."""

from __future__ import annotations

from .. import build, registry
from ..catalogue import CandidateRounds
from .config import ServiceConfig
from .errors import ConfigError, literal

__all__ = ["catalogue_learners", "catalogue_class", "make_catalogue_learner", "load_catalogue_model", "MAX_SLOTS"]

#: the most slots one request may name (the request bodies' limit): a service with more never serves
MAX_SLOTS = 50


def catalogue_learners() -> list[str]:
    """The learners an action-feature service can deploy (the catalogue family)."""
    return registry.learners_where(family="catalogue")


def catalogue_class(name: str):
    """The catalogue learner for ``name``: a catalogue learner itself, or the catalogue twin of an index
    learner ("SquareCB" -> CatalogueSquareCB)."""
    try:
        return build.catalogue_learner_class(name)
    except build.UnknownName:
        raise ConfigError(f"{{}} {literal(repr(name))} has no action-feature form; {{}} serves: "
                          f"{', '.join(catalogue_learners())} (also by their index names, e.g. SquareCB).", "learner",
                          "action_features") from None


def _start_state(learner) -> None:
    """Create a fresh learner's state (weights, random stream; parameters validated) through its public
    API: the distribution of a round without features (nothing is drawn)."""
    learner.action_probabilities(CandidateRounds.from_features([{}], [[{}]]))


def make_catalogue_learner(cfg: ServiceConfig):
    """A fresh catalogue learner from the configuration: hashed features (``bits``, ``interactions``)."""
    if cfg.learner is None:
        raise ConfigError("give {} (e.g. SquareCB) with {}.", "learner", "action_features")
    klass = catalogue_class(cfg.learner)
    params = dict(cfg.params)
    if params.get("features", "hashed") != "hashed":
        raise ConfigError("{} hashes the features of each request: leave out features=... ({}).",
                          "action_features", "params")
    params["features"] = "hashed"
    if cfg.bits is not None:
        params["bits"] = int(cfg.bits)
    if cfg.interactions is not None:
        params["interactions"] = tuple(cfg.interactions)
    for k, v in (("rho0", cfg.rho0), ("rho1", cfg.rho1)):
        if v and k not in params:
            params[k] = v
    try:
        learner = build.build_learner(klass, **params)
        _start_state(learner)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{klass.__name__}: {exc}") from None
    n_slots = int(learner.get_params().get("n_slots", 1))
    if n_slots > MAX_SLOTS:
        raise ConfigError(f"{{}}: n_slots = {n_slots}, but a request names at most {MAX_SLOTS} slots; give "
                          f"n_slots <= {MAX_SLOTS}.", "params")
    return learner


def load_catalogue_model(cfg: ServiceConfig):
    """The catalogue learner of ``--model``: a model written by ``noisyfeedback train`` (or a hashed catalogue
    learner's ``save``), served as it was trained and learning on from there. Requests are hashed as the
    trainer hashed its examples (VW's rules for JSON and text, `noisyfeedback.hashing`), so a request's
    ``{"User": {"age": 3}}`` reaches the weights of a VW line's ``|User age:3``. ``--learner``, ``--bits``,
    ``--interaction``, ``--rho0``/``--rho1`` may be left out; given, they must agree with the model."""
    from pathlib import Path

    from ..base import load

    path = Path(cfg.model)
    if path.is_dir():
        raise ValueError(f"--model {str(path)!r} is a folder; give a model file (.npz) written by 'noisyfeedback "
                         "train'.")
    if not path.is_file():
        raise ValueError(f"--model {str(path)!r}: no such file.")
    try:
        learner = load(path)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        msg = str(exc)
        raise ValueError(msg if str(path) in msg else f"--model {str(path)!r}: {msg}") from None
    name = type(learner).__name__
    if name not in catalogue_learners():
        raise ValueError(f"--model {str(path)!r} holds a {name}; --action-features serves the catalogue learners "
                         f"({', '.join(catalogue_learners())}), as 'noisyfeedback train' writes them.")
    if learner.features != "hashed":
        raise ValueError(f"--model {str(path)!r} holds a {name} of dense features; --action-features hashes each "
                         "request's features: train with features='hashed' (as 'noisyfeedback train' does).")
    params = learner.get_params()
    given = [("--learner", None if cfg.learner is None else catalogue_class(cfg.learner).__name__, name),
             ("--bits", cfg.bits, params["bits"]),
             ("--interaction", None if cfg.interactions is None else tuple(cfg.interactions),
              None if params["interactions"] is None else tuple(params["interactions"]))]
    given += [(f"--{k}", None if getattr(cfg, k) is None else float(getattr(cfg, k)), float(params[k]))
              for k in ("rho0", "rho1")]
    for opt, new, stored in given:
        if new is not None and new != stored:
            raise ValueError(f"--model {str(path)!r} was trained with {opt.lstrip('-')} = {stored!r}; {opt} {new!r} "
                             "differs (leave the option out to serve the model as trained).")
    fixed = {"features", "bits", "interactions", "rho0", "rho1"} & set(cfg.params)
    if fixed:
        raise ValueError(f"--param {min(fixed)}=... cannot change a trained model's features or flip rates.")
    valid = learner.get_params()
    try:
        for k, v in cfg.params.items():  # e.g. exploration: set on the trained model (set_params would reset it)
            if k not in valid:
                raise ValueError(f"Invalid parameter {k!r} for {name}. Valid parameters: {sorted(valid)}.")
            setattr(learner, k, v)
        _start_state(learner)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: {exc}") from None
    return learner
