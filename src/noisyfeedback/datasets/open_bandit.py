"""The Open Bandit Dataset (Saito, Aihara, Matsutani & Narita, ZOZO) — logged recommendations with clicks.

Layout (as the authors ship it): ``<root>/<policy>/<campaign>/<campaign>.csv`` with columns
``"" (row index), timestamp, item_id, position (1..3), click, propensity_score, user_feature_0..3
(hashed strings), user-item_affinity_0..K−1``, and ``<root>/prior_bts.yaml`` with the Beta prior
(alpha, beta per item, for each campaign) of the Bernoulli Thompson Sampling policy that ran in
production. ``<root>`` is ``open-bandit/`` (or ``open_bandit/``) in a data directory, or the
directory itself.

Contexts are as in the authors' pipeline (obp's ``OpenBanditDataset``): the four hashed user
features one-hot encoded (categories in sorted order, per file) followed by the K affinity columns.

Item features: ``item_context.csv`` next to each log (``<root>/<policy>/<campaign>/item_context.csv``,
columns ``"" (row index), item_id, item_feature_0..`` — in the sample a number, then three hashed
strings; the hashes differ between the files of the two policies, so each log goes with its own
file). `load_item_context` reads it into an `ItemContext`: numbers kept as numbers,
strings as strings, with two views for the catalogue learners (``nf.CatalogueSquareCB``): dense
(numbers, then each string column one-hot: ``features="dense"``) and namespaced dicts (hashed by the
learner as VW does: ``features="hashed"``). `candidate_log` turns a log and its items into
rounds of candidates (a shared context and the K items) for ``fit_logged`` and the candidate-set
estimators of `noisyfeedback.ope`.

References
----------
.. [1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline:
   Towards realistic and reproducible off-policy evaluation. NeurIPS Datasets and Benchmarks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..base import make_rng

__all__ = ["OpenBanditLog", "load_open_bandit", "read_prior_bts", "bts_action_distribution", "find_open_bandit",
           "POLICIES", "CAMPAIGNS", "write_open_bandit_csv", "ItemContext", "load_item_context",
           "CandidateLog", "candidate_log", "write_item_context_csv"]

POLICIES = ("random", "bts")
CAMPAIGNS = ("all", "men", "women")
_SUBDIRS = ("open-bandit", "open_bandit", "obd", "")


@dataclass
class OpenBanditLog:
    """One logging policy's rows of one campaign.

    X : (n, d) float64 contexts; actions : (n,) item index 0..K−1; position : (n,) slot 0..2
    (the file's 1..3 minus 1); reward : (n,) click 0/1; propensities : (n,) the logging policy's
    probability of the item at that position; n_actions : K; feature_names : d names;
    policy, campaign : which file; path : where it was read from."""

    X: np.ndarray
    actions: np.ndarray
    position: np.ndarray
    reward: np.ndarray
    propensities: np.ndarray
    n_actions: int
    feature_names: list[str]
    policy: str
    campaign: str
    path: Path | None = None
    timestamp: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))

    @property
    def n_rounds(self) -> int:
        return int(self.actions.shape[0])

    @property
    def len_list(self) -> int:
        return int(self.position.max()) + 1 if self.position.size else 0


def _check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"The '{name}' parameter of load_open_bandit must be one of {allowed}. Got {value!r} instead.")
    return value


def find_open_bandit(data_dir: str | os.PathLike | None = None, policy: str = "random",
                     campaign: str = "all") -> Path:
    """The CSV file of (policy, campaign): searched in ``data_dir`` then the default data directories
    (``open-bandit/`` in each, or the directory itself). Raises FileNotFoundError listing where it looked."""
    from ._common import data_dirs

    tried = []
    for base in data_dirs(data_dir):
        for sub in _SUBDIRS:
            path = (base / sub if sub else base) / policy / campaign / f"{campaign}.csv"
            tried.append(path)
            if path.is_file():
                return path
    raise FileNotFoundError(
        f"Open Bandit Dataset file {policy}/{campaign}/{campaign}.csv not found; looked in: "
        + ", ".join(str(p.parent.parent.parent) for p in tried[::len(_SUBDIRS)]) + " (and their open-bandit/). "
        "The 10,000-row sample ships inside the Python package obp 0.4.1 (obp/dataset/obd/); the full data set "
        "is at https://research.zozo.com/data.html (CC BY 4.0).")


def load_open_bandit(policy: str = "random", campaign: str = "all", data_dir: str | os.PathLike | None = None,
                     path: str | os.PathLike | None = None) -> OpenBanditLog:
    """Read one Open Bandit Dataset file (``path``, or found from ``data_dir``): an `OpenBanditLog`.

    Malformed files raise ValueError naming the file and the column or row."""
    import pandas as pd

    _check_choice("policy", policy, POLICIES)
    _check_choice("campaign", campaign, CAMPAIGNS)
    path = Path(path) if path is not None else find_open_bandit(data_dir, policy, campaign)
    try:
        df = pd.read_csv(path, index_col=0)
    except Exception as exc:
        raise ValueError(f"{path}: not a readable Open Bandit CSV file ({exc}).") from None
    need = ["item_id", "position", "click", "propensity_score"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; the columns are {list(df.columns)[:8]}...")
    user_cols = sorted((c for c in df.columns if c.startswith("user_feature_")), key=lambda c: int(c.rsplit("_", 1)[1]))
    aff_cols = sorted((c for c in df.columns if c.startswith("user-item_affinity_")),
                      key=lambda c: int(c.rsplit("_", 1)[1]))
    for c in need:
        if df[c].isna().any():
            row = int(np.flatnonzero(df[c].isna().to_numpy())[0])
            raise ValueError(f"{path}: column {c!r} is missing in data row {row}.")
    actions = df["item_id"].to_numpy()
    position = df["position"].to_numpy()
    click = df["click"].to_numpy()
    prop = df["propensity_score"].to_numpy(dtype=np.float64)
    for c, arr in (("item_id", actions), ("position", position), ("click", click)):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{path}: column {c!r} must hold integers; got dtype {arr.dtype}.")
    n_actions = max(int(actions.max()) + 1 if actions.size else 0, len(aff_cols))
    checks = (("item_id", (actions < 0) | (actions >= n_actions)), ("position", (position < 1) | (position > 3)),
              ("click", (click != 0) & (click != 1)), ("propensity_score", ~((prop >= 0) & (prop <= 1))))
    for c, bad in checks:
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{path}: column {c!r} has an invalid value in data row {row}: {df[c].iloc[row]!r}.")
    blocks, names = [], []
    for c in user_cols:
        cats = np.sort(df[c].astype(str).unique())
        codes = np.searchsorted(cats, df[c].astype(str).to_numpy())
        onehot = np.zeros((len(df), cats.size))
        onehot[np.arange(len(df)), codes] = 1.0
        blocks.append(onehot)
        names += [f"{c}={v}" for v in cats]
    if aff_cols:
        aff = df[aff_cols].to_numpy(dtype=np.float64)
        if not np.isfinite(aff).all():
            row = int(np.flatnonzero(~np.isfinite(aff).all(axis=1))[0])
            raise ValueError(f"{path}: an affinity feature is not a finite number in data row {row}.")
        blocks.append(aff)
        names += aff_cols
    X = np.ascontiguousarray(np.hstack(blocks)) if blocks else np.zeros((len(df), 0))
    ts = df["timestamp"].to_numpy() if "timestamp" in df.columns else np.zeros(0, dtype=object)
    return OpenBanditLog(X, actions.astype(np.int64), position.astype(np.int64) - 1, click.astype(np.int64), prop,
                         int(n_actions), names, policy, campaign, path, ts)


@dataclass
class ItemContext:
    """The items' features of one log (``item_context.csv``), row a describing item a (0..K−1).

    numeric : (K, p) float64, the columns read as numbers, named ``numeric_names``; categorical :
    (K, q) object array of strings (the hashed columns), named ``categorical_names``; path : where
    it was read from."""

    numeric: np.ndarray
    numeric_names: list[str]
    categorical: np.ndarray
    categorical_names: list[str]
    path: Path | None = None

    @property
    def n_items(self) -> int:
        return int(self.numeric.shape[0])

    def dense(self) -> tuple[np.ndarray, list[str]]:
        """(K, d) float64 and its d column names: the numbers as they are, then each string column
        one-hot (categories in sorted order, named ``column=value``)."""
        blocks, names = [self.numeric], list(self.numeric_names)
        for j, name in enumerate(self.categorical_names):
            cats, codes = np.unique(self.categorical[:, j].astype(str), return_inverse=True)
            onehot = np.zeros((self.n_items, cats.size))
            onehot[np.arange(self.n_items), codes] = 1.0
            blocks.append(onehot)
            names += [f"{name}={v}" for v in cats]
        return np.ascontiguousarray(np.hstack(blocks)), names

    def dicts(self, namespace: str = "item") -> list[dict[str, dict[str, Any]]]:
        """One namespaced dict per item, ``{namespace: {column: number or string}}``, for hashed
        features (``CandidateRounds.from_features``): a number is the feature's value, a string
        ``v`` of column ``c`` the feature ``cv`` of value 1 (VW's JSON reading)."""
        out = []
        for a in range(self.n_items):
            feats: dict[str, Any] = {n: float(self.numeric[a, j]) for j, n in enumerate(self.numeric_names)}
            feats.update({n: str(self.categorical[a, j]) for j, n in enumerate(self.categorical_names)})
            out.append({namespace: feats})
        return out


def _feature_index(name: str) -> int:
    tail = name.rsplit("_", 1)[1]
    return int(tail) if tail.isdigit() else 10 ** 9


def load_item_context(policy: str = "random", campaign: str = "all", data_dir: str | os.PathLike | None = None,
                      path: str | os.PathLike | None = None) -> ItemContext:
    """Read the item features of one log: ``path``, or ``item_context.csv`` next to the log of
    (policy, campaign) found from ``data_dir``. An `ItemContext`, items sorted by item_id.

    Columns ``item_feature_*`` are taken in the order of their number; a column that pandas reads
    as numbers is numeric, any other is categorical (read as strings). Malformed files raise
    ValueError naming the file and the column or row."""
    import pandas as pd

    _check_choice("policy", policy, POLICIES)
    _check_choice("campaign", campaign, CAMPAIGNS)
    if path is None:
        path = find_open_bandit(data_dir, policy, campaign).parent / "item_context.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{path.name} not found next to the {policy}/{campaign} log ({path.parent}).")
    path = Path(path)
    try:
        df = pd.read_csv(path, index_col=0)
    except Exception as exc:
        raise ValueError(f"{path}: not a readable item context CSV file ({exc}).") from None
    cols = sorted((c for c in df.columns if str(c).startswith("item_feature_")), key=_feature_index)
    if "item_id" not in df.columns or not cols:
        raise ValueError(f"{path}: needs the columns item_id and item_feature_*; the columns are {list(df.columns)}.")
    ids = df["item_id"].to_numpy()
    if not np.issubdtype(ids.dtype, np.integer) or np.sort(ids).tolist() != list(range(len(ids))):
        raise ValueError(f"{path}: column 'item_id' must list each item 0..{len(ids) - 1} once; "
                         f"got {ids[:8].tolist()}...")
    df = df.iloc[np.argsort(ids, kind="stable")]
    for c in cols:
        if df[c].isna().any():
            row = int(np.flatnonzero(df[c].isna().to_numpy())[0])
            raise ValueError(f"{path}: column {c!r} is missing for item {row}.")
    num = [c for c in cols if df[c].dtype.kind in "iuf"]
    cat = [c for c in cols if c not in num]
    numeric = df[num].to_numpy(dtype=np.float64) if num else np.zeros((len(df), 0))
    if not np.isfinite(numeric).all():
        row = int(np.flatnonzero(~np.isfinite(numeric).all(axis=1))[0])
        raise ValueError(f"{path}: a numeric item feature is not finite for item {row}.")
    categorical = df[cat].astype(str).to_numpy(dtype=object) if cat else np.zeros((len(df), 0), dtype=object)
    return ItemContext(np.ascontiguousarray(numeric), num, categorical, cat, path)


@dataclass
class CandidateLog:
    """A log as rounds of candidates (`candidate_log`): what ``fit_logged`` of a catalogue
    learner and `evaluate_candidates` take.

    rounds : CandidateRounds, per row the shared context and the K items in item order; actions :
    (n,) the logged item's place in its round (its item_id); rewards : (n,) clicks; propensities :
    (n,); position : (n,) slot 0..2; context_names, item_names : the feature columns' names."""

    rounds: Any
    actions: np.ndarray
    rewards: np.ndarray
    propensities: np.ndarray
    position: np.ndarray
    context_names: list[str]
    item_names: list[str]

    @property
    def n_rounds(self) -> int:
        return int(self.actions.shape[0])

    @property
    def offsets(self) -> np.ndarray:
        return self.rounds.offsets

    def take(self, rows: Any) -> "CandidateLog":
        """The rows ``rows`` (in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        return CandidateLog(self.rounds.take(rows), self.actions[rows], self.rewards[rows], self.propensities[rows],
                            self.position[rows], self.context_names, self.item_names)


def candidate_log(log: OpenBanditLog, items: ItemContext, n_slots: int = 3) -> CandidateLog:
    """``log`` as rounds of candidates, dense features (``features="dense"``).

    Per row: the shared context is the user features one-hot (as in ``log.X``) and the logged
    position one-hot (``n_slots`` columns); the candidates are all K items of ``items`` in item
    order, each its `ItemContext.dense` row plus one column ``affinity``, the user's affinity
    to that item (``user-item_affinity_a`` of the row; 0 without those columns). The logged action is
    the item (its place in the round is its item_id), its propensity the file's propensity_score.

    **Position** is conditioned on, not modelled: it enters the shared context, so a policy scored on
    these rounds chooses an item for the slot the row was shown in, and π(item | context, slot) is
    what the off-policy weights need (``propensity_score`` is the logging policy's probability of the
    item at that slot). In the random logs item and slot are drawn independently and uniformly, so
    every (item, slot) pair is covered. The catalogue learners' multi-slot model (``n_slots``,
    examination factors) needs whole pages, and the file has one row per (impression, slot) without
    a reliable page id.

    The item affinities are candidate features rather than K context columns: the learner then
    scores "this user's affinity to this item" with one weight shared by all items."""
    import scipy.sparse as sp

    from ..catalogue import CandidateRounds

    if not isinstance(log, OpenBanditLog) or not isinstance(items, ItemContext):
        raise TypeError("candidate_log takes an OpenBanditLog and an ItemContext; got "
                        f"{type(log).__name__} and {type(items).__name__}.")
    if isinstance(n_slots, bool) or not isinstance(n_slots, (int, np.integer)) or n_slots < 1:
        raise ValueError(f"The 'n_slots' parameter of candidate_log must be an int >= 1. Got {n_slots!r} instead.")
    K, n = items.n_items, log.n_rounds
    if K < log.n_actions:
        raise ValueError(f"the log has {log.n_actions} items but its item context only {K}.")
    if log.position.size and log.position.max() >= n_slots:
        raise ValueError(f"the log has slot {int(log.position.max()) + 1}; n_slots={n_slots}.")
    user = [j for j, name in enumerate(log.feature_names) if name.startswith("user_feature_")]
    pos = np.zeros((n, n_slots))
    pos[np.arange(n), log.position] = 1.0
    context = np.ascontiguousarray(np.hstack([log.X[:, user], pos]))
    context_names = [log.feature_names[j] for j in user] + [f"position={k + 1}" for k in range(n_slots)]
    base, item_names = items.dense()
    d = base.shape[1]
    aff = np.zeros((n, K))
    for a in range(K):
        name = f"user-item_affinity_{a}"
        if name in log.feature_names:
            aff[:, a] = log.X[:, log.feature_names.index(name)]
    B = sp.coo_matrix(base)
    row = (np.arange(n)[:, None] * K + B.row[None, :]).ravel()
    col = np.tile(B.col, n)
    val = np.tile(B.data, n)
    nz = np.flatnonzero(aff.ravel())
    item_rows = sp.csr_matrix((np.concatenate([val, aff.ravel()[nz]]),
                               (np.concatenate([row, nz]), np.concatenate([col, np.full(nz.size, d)]))),
                              shape=(n * K, d + 1))
    offsets = np.arange(n + 1, dtype=np.int64) * K
    rounds = CandidateRounds(context, item_rows, offsets, np.tile(np.arange(K), n))
    return CandidateLog(rounds, log.actions.copy(), log.reward.copy(), log.propensities.copy(), log.position.copy(),
                        context_names, item_names + ["affinity"])


def read_prior_bts(path: str | os.PathLike) -> dict[str, dict[str, np.ndarray]]:
    """The production Beta prior of the BTS policy: ``{campaign: {"alpha": (K,), "beta": (K,)}}``.

    Reads the authors' ``prior_bts.yaml`` (campaign → alpha/beta lists) without a YAML library."""
    out: dict[str, dict[str, list[float]]] = {}
    campaign = key = None
    with open(path, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            text = line.strip()
            if text.startswith("-"):
                if campaign is None or key is None:
                    raise ValueError(f"{path}, line {lineno}: a list item outside campaign/alpha|beta.")
                try:
                    out[campaign][key].append(float(text[1:].strip()))
                except ValueError:
                    raise ValueError(f"{path}, line {lineno}: {text[1:].strip()!r} is not a number.") from None
            elif text.endswith(":") and indent == 0:
                campaign, key = text[:-1].strip(), None
                out[campaign] = {}
            elif text.endswith(":") and campaign is not None:
                key = text[:-1].strip()
                out[campaign][key] = []
            else:
                raise ValueError(f"{path}, line {lineno}: cannot read {text!r}.")
    res = {}
    for c, d in out.items():
        if set(d) != {"alpha", "beta"} or len(d["alpha"]) != len(d["beta"]):
            raise ValueError(f"{path}: campaign {c!r} needs alpha and beta lists of the same length.")
        res[c] = {"alpha": np.array(d["alpha"]), "beta": np.array(d["beta"])}
    return res


def bts_action_distribution(alpha: Any, beta: Any, len_list: int = 3, n_sim: int = 100_000,
                            seed: int | None = 12345) -> np.ndarray:
    """P(item a is shown at position k) of Bernoulli Thompson Sampling with Beta(alpha, beta) posteriors,
    shape (K, len_list), each column summing to 1.

    As the dataset's authors compute the evaluation policy (obp's ``BernoulliTS(is_zozotown_prior=True)
    .compute_batch_action_dist``): ``n_sim`` Monte Carlo rounds, each drawing θ_a ~ Beta(α_a, β_a) for
    every item and showing the items in decreasing θ at positions 0, 1, 2; the frequency of each
    (item, position). Vectorised here, with our seeded generator (obp uses its own seed and loop, so the
    numbers agree up to Monte Carlo error, about 0.0016 at most for n_sim = 100,000).

    >>> P = bts_action_distribution([1.0, 5.0, 1.0], [9.0, 5.0, 1.0], len_list=2, n_sim=20_000, seed=0)
    >>> P.shape, np.allclose(P.sum(axis=0), 1.0)
    ((3, 2), True)
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    K = alpha.shape[0]
    if beta.shape != alpha.shape or K < len_list or (alpha <= 0).any() or (beta <= 0).any():
        raise ValueError("alpha and beta must be positive arrays of the same length K >= len_list.")
    rng = make_rng(seed)
    counts = np.zeros((K, len_list))
    chunk = 10_000
    for lo in range(0, n_sim, chunk):
        m = min(chunk, n_sim - lo)
        theta = rng.beta(alpha, beta, size=(m, K))
        top = np.argsort(-theta, axis=1, kind="stable")[:, :len_list]
        for k in range(len_list):
            counts[:, k] += np.bincount(top[:, k], minlength=K)
    return counts / n_sim


def write_open_bandit_csv(path: str | os.PathLike, actions, position, click, propensities, user_features,
                          affinity, item_features: Any = None) -> Path:
    """Write a log in the Open Bandit CSV layout (``position`` 0-based here, written 1-based): for tests,
    the quick reproduction and exporting our own simulated logs.

    ``item_features``: optional columns (each K values, numbers or strings) written as
    ``item_feature_0..`` of ``item_context.csv`` next to the log, one row per item 0..K−1."""
    import pandas as pd

    n = len(actions)
    df = pd.DataFrame({"timestamp": pd.date_range("2019-11-24", periods=n, freq="s", tz="UTC").astype(str),
                       "item_id": np.asarray(actions, dtype=np.int64),
                       "position": np.asarray(position, dtype=np.int64) + 1,
                       "click": np.asarray(click, dtype=np.int64),
                       "propensity_score": np.asarray(propensities, dtype=np.float64)})
    uf = np.asarray(user_features)
    for j in range(uf.shape[1]):
        df[f"user_feature_{j}"] = [f"{v:032x}" if isinstance(v, (int, np.integer)) else str(v) for v in uf[:, j]]
    aff = np.asarray(affinity, dtype=np.float64)
    for j in range(aff.shape[1]):
        df[f"user-item_affinity_{j}"] = aff[:, j]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path)
    if item_features is not None:
        write_item_context_csv(path.parent / "item_context.csv", item_features)
    return path


def write_item_context_csv(path: str | os.PathLike, item_features: Any) -> Path:
    """Write ``item_context.csv``: ``item_features`` is a list of columns, each with one value (a
    number or a string) per item 0..K−1, written as ``item_feature_0..``."""
    import pandas as pd

    columns = [list(c) for c in item_features]
    if not columns or len({len(c) for c in columns}) != 1 or not columns[0]:
        raise ValueError("item_features must be a non-empty list of columns of the same length K >= 1.")
    K = len(columns[0])
    df = pd.DataFrame({"item_id": np.arange(K, dtype=np.int64)})
    for j, c in enumerate(columns):
        df[f"item_feature_{j}"] = c
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path)
    return path
