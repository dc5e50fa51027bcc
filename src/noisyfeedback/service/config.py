"""How a service starts: `ServiceConfig`, its checks (typed `ConfigError`\\ s naming
the fields, which each front door words its own way) and the fresh learner it describes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError, literal
from .learner import load_model, make_learner
from .storage import is_dsn

__all__ = ["ServiceConfig", "build_learner", "rates_conf", "REPLICA_NAME"]

REPLICA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass
class ServiceConfig:
    """How to start a service. The learner is given by ``model`` (a saved ``.npz``) or by ``learner``,
    ``n_classes`` and ``n_features`` (plus ``params``); on a database that already holds a service, the
    database's configuration and last snapshot win, and a different ``learner``, ``n_classes``,
    ``n_features``, ``rho0``, ``rho1`` or ``params`` value is refused (``None``: not given). ``rho0``/``rho1``:
    one flip rate, or a list of one per action (flips that depend on the action)."""

    db: str | Path
    model: str | Path | None = None
    learner: str | None = None
    n_classes: int | None = None
    n_features: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    rho0: float | list[float] | None = None
    rho1: float | list[float] | None = None
    mode: str = "online"
    snapshot_every: int = 100_000
    synchronous: str = "FULL"
    max_body: int = 1 << 20
    snapshot_dir: str | Path | None = None
    #: seconds a write waits for a lock held by another process before the request gets 503
    busy_timeout: float = 30.0
    #: bytes of request line and headers together (431 beyond)
    max_header: int = 16 << 10
    #: nesting depth of a JSON body (422 beyond)
    max_depth: int = 32
    #: serve rounds of actions described by features (a catalogue learner; ``/rank`` takes
    #: ``context_features`` and ``actions``), hashed into 2^bits weights with the given interactions
    action_features: bool = False
    bits: int | None = None
    interactions: tuple[str, ...] | None = None
    #: actions a request may list (action-feature services)
    max_actions: int = 50
    #: this process's name among the replicas of one PostgreSQL log (None: the only process serving it)
    replica: str | None = None
    #: seconds between two reads of the rewards other replicas logged, when this one writes nothing
    poll_interval: float = 0.05
    #: seconds a request's reads and the log's writes are tried again for, with backoff, while a PostgreSQL
    #: log cannot be reached (a restart, a failover), before the request gets 503
    db_retry: float = 2.0
    #: seconds the log writer waits, once it has a write and other requests are in flight, for their writes to
    #: join the same commit (group commit, as PostgreSQL's ``commit_delay`` with ``commit_siblings``; 0: never)
    commit_delay: float = 0.001

    def check(self) -> None:
        """Refuse values no service can run with (one `ConfigError` naming the field)."""
        def positive_int(name, value, low=1):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                      or value < low):
                raise ConfigError(f"{{}} must be an integer >= {low}; got {literal(repr(value))}.", name)
        positive_int("n_classes", self.n_classes, 2)
        positive_int("n_features", self.n_features)
        positive_int("max_body", self.max_body)
        positive_int("max_header", self.max_header, 1024)
        positive_int("max_depth", self.max_depth, 2)
        positive_int("snapshot_every", self.snapshot_every, 0)
        positive_int("max_actions", self.max_actions)
        if self.action_features:
            positive_int("bits", self.bits)
            if self.bits is not None and self.bits > 30:
                raise ConfigError(f"{{}} must be at most 30; got {literal(repr(self.bits))}.", "bits")
            if self.mode != "online":
                raise ConfigError("{} serves in online mode only (apprentice mode is for the numeric API).",
                                  "action_features")
            if self.n_classes is not None or self.n_features is not None:
                raise ConfigError("{} takes its actions and features from each request: leave out {} and {}.",
                                  "action_features", "n_classes", "n_features")
        elif self.bits is not None or self.interactions is not None:
            raise ConfigError("{} and {} hash action features: give {} too.", "bits", "interactions",
                              "action_features")
        self._check_rates()
        if self.mode not in ("online", "apprentice"):
            raise ConfigError(f"{{}} must be online or apprentice; got {literal(repr(self.mode))}.", "mode")
        if self.replica is not None and not (isinstance(self.replica, str) and REPLICA_NAME.fullmatch(self.replica)):
            raise ConfigError(f"{{}} must be 1 to 64 letters, digits, '_' or '-'; got {literal(repr(self.replica))}.",
                              "replica")
        if self.replica is not None and not is_dsn(self.db):
            raise ConfigError("{} needs a PostgreSQL log ({} postgresql://...): replicas share one database.",
                              "replica", "db")
        if not (isinstance(self.poll_interval, (int, float)) and 0.001 <= self.poll_interval <= 60):
            raise ConfigError(f"{{}} must be in [0.001, 60] seconds; got {literal(repr(self.poll_interval))}.",
                              "poll_interval")
        if not (isinstance(self.commit_delay, (int, float)) and 0 <= self.commit_delay <= 0.1):
            raise ConfigError(f"{{}} must be in [0, 0.1] seconds; got {literal(repr(self.commit_delay))}.",
                              "commit_delay")
        if not (isinstance(self.db_retry, (int, float)) and 0 <= self.db_retry <= 600):
            raise ConfigError(f"{{}} must be in [0, 600] seconds; got {literal(repr(self.db_retry))}.", "db_retry")
        if not (isinstance(self.busy_timeout, (int, float)) and 0 < self.busy_timeout < 3600):
            raise ConfigError(f"{{}} must be in (0, 3600) seconds; got {literal(repr(self.busy_timeout))}.",
                              "busy_timeout")

    def _check_rates(self) -> None:
        rates = {}
        for name in ("rho0", "rho1"):
            v = getattr(self, name)
            per = isinstance(v, (list, tuple))
            vals = list(v) if per else [v]
            if v is not None and (not vals or not all(isinstance(r, (int, float)) and not isinstance(r, bool)
                                                       and 0 <= r < 1 for r in vals)):
                raise ConfigError(f"{{}} must be in [0, 1), or one such rate per action; got {literal(repr(v))}.",
                                  name)
            if per and self.n_classes is not None and len(vals) != self.n_classes:
                raise ConfigError(f"{{}} must hold one rate per action: {self.n_classes} rates; got {len(vals)}.",
                                  name)
            rates[name] = vals if v is not None else [0.0]
        r0, r1 = rates["rho0"], rates["rho1"]
        if self.action_features and (isinstance(self.rho0, (list, tuple)) or isinstance(self.rho1, (list, tuple))):
            raise ConfigError("{}/{} per action need numbered actions: with {} the actions change with each "
                              "request; give one rate.", "rho0", "rho1", "action_features")
        if len(r0) > 1 and len(r1) > 1 and len(r0) != len(r1):
            raise ConfigError(f"{{}} and {{}} must hold as many rates; got {len(r0)} and {len(r1)}.", "rho0", "rho1")
        n = max(len(r0), len(r1))
        for a in range(n):
            x0, x1 = r0[a if len(r0) > 1 else 0], r1[a if len(r1) > 1 else 0]
            if x0 + x1 >= 1:
                where = f" for action {a}" if n > 1 else ""
                raise ConfigError(f"{{}} + {{}} must be below 1{where}; got {x0} + {x1}.", "rho0", "rho1")


def rates_conf(v) -> float | list[float]:
    """A flip-rate option as the stored configuration holds it: a float, or a list of one per action."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [float(r) for r in v]
    return float(v or 0.0)


def build_learner(cfg: ServiceConfig):
    """A fresh learner from the configuration, with its state (weights, random stream) created."""
    if cfg.model is not None:
        return load_model(cfg.model, cfg.n_features)
    if cfg.learner is None or cfg.n_classes is None or cfg.n_features is None:
        raise ConfigError("give {}, or {} with {} and {}.", "model", "learner", "n_classes", "n_features")
    return make_learner(cfg.learner, int(cfg.n_classes), int(cfg.n_features), cfg.params, cfg.rho0, cfg.rho1)
