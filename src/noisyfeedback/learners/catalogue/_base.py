"""Shared machinery of the catalogue learners (CatalogueSquareCB, CatalogueEpsilonGreedy).

**Why classes of their own, not a mode of ``SquareCB``.** The index learners' contract is a fixed K and
a row x per round (``act(X)`` → labels 0..K−1, state ``W_`` (K, d), the check suite's (X, y) problems,
``nf.simulate(learner, X, y, ...)``). A catalogue round is a context plus a candidate list of any
length whose members are described by features; the state is one weight vector over context × item
features, not one row per label. A mode would put two data models behind every method of one class;
separate classes keep both contracts plain and share the oracle and the policy formulas instead
(``kernels/catalogue.py`` computes them in the index kernels' order, so one-hot candidates give the
index learner's bits — tested).

**Model** (``kernels/catalogue.py``): f(x, z) = x̂ᵀ M ẑ + w_aᵀ ẑ + w_cᵀ x̂ + b over the context x̂
(``context_norm="auto"``: as given, x̂ = x, with the ridge oracle, whose penalty is relative to the first
round's scale; x/‖x‖ with AdaGrad or NLMS) and the item features ẑ = z as given (``item_norm="unit"``:
ẑ = z/‖z‖);
``features="dense"`` stores M (d_c × d_a) as a bilinear form (no hashing), ``features="hashed"``
hashes the interaction (VW's ``-q``) and the linear terms into 2^bits weights. ``linear`` picks the
linear terms: "all" (items, context and intercept), "item" (items only: the index learner's per-label
intercepts under one-hot candidates) or "none".

**Oracle** (``oracle="auto"``, the default): the ridge oracle (recursive least squares over all D weights,
O(D²) a round) for dense features with D <= ``AUTO_RIDGE_MAX_WEIGHTS``, AdaGrad above and for hashed
features; resolved at the first round into ``oracle_`` (saved with the model). CatalogueSquareCB's
``gamma_scale`` follows it: greedy first with ridge ("adaptive", the default), 10 otherwise.

**Flipped clicks.** As for the index oracle: with flips that depend neither on the item nor on the
context, E[f̃ | x, z] = ρ0 + (1 − ρ0 − ρ1)·P(click | x, z) is an increasing affine map of the clean
click probability, so the regression ranks candidates as a clean one would; flips add variance.

**Slots** (``n_slots = k > 1``): k distinct candidates by sequential sampling without replacement
(slot 1 from the policy over all candidates, slot 2 over the rest, …; VW's CCB), each slot's
conditional probability logged. Clicks follow a position-based model P(click at slot s) =
c_s·r(x, z): slot s's regression predicts c_s·f(x, z), so f estimates r(x, z) at the first position
and the examination of lower positions does not leak into the item scores. c_s is ``examination``
(given, relative to slot 1) or estimated online: c_s = [(Σ f̃_s + 1)/(Σ f̂_s + 1)] / [(Σ f̃_1 + 1)/(Σ f̂_1 + 1)]
with f̂ the model's score (clipped to [0, 1]) of the candidate placed at s (a ratio of observed to
predicted clicks, which the position-blind item scores make identifiable under randomised placement).

**Graded rewards.** ``learn``/``fit_logged`` take any real-valued reward per slot (0.5 for a partial
success), fitted as it is; the flip rates are for clicks, so with ``rho0``/``rho1`` set only 0/1 rewards
are taken. The examination estimate is the same ratio of observed to predicted reward: it assumes
rewards >= 0 (give ``examination`` for rewards that can be negative).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, Options, check_memory
from ...base import Learner, Tags, make_rng
from ...catalogue import CandidateRounds, CandidateStream
from ...hashing import HashedRows
from ...kernels.catalogue import (
    LIN_BIAS,
    LIN_CONTEXT,
    LIN_ITEM,
    MODE_DENSE,
    MODE_HASHED,
    ORACLE_ADAGRAD,
    ORACLE_NORMALIZED,
    ORACLE_RIDGE,
    cat_act,
    cat_learn,
    cat_simulate,
    cat_values,
    inv_norms,
)
from .._linear import check_rewards

_ORACLES = {"adagrad": ORACLE_ADAGRAD, "normalized": ORACLE_NORMALIZED, "ridge": ORACLE_RIDGE}

#: ``oracle="auto"`` takes the ridge oracle (recursive least squares over all D weights, O(D²) a round) for
#: dense features with D = d_c·d_a + d_a + d_c + 1 <= this many weights, AdaGrad above and for hashed features.
#: The tuning data of benchmarks/tune_catalogue.py (D = 231 to 715 with ridge better, 8,635 with AdaGrad) left
#: any value between; 2,048 because the `wide` stream family's tuning seed (D = 1,225) wanted ridge: regret
#: 0.025 against AdaGrad's 0.072 (benchmarks/RESULTS.md, "Greedy first"), at about 1.4 ms a round.
AUTO_RIDGE_MAX_WEIGHTS = 2048
_NO_SCORES = np.zeros(0)  # (act's scores not wanted)


def resolve_catalogue_oracle(oracle: str, features: str, n_weights: int) -> str:
    """The oracle ``oracle="auto"`` stands for: "ridge" for dense features with at most
    AUTO_RIDGE_MAX_WEIGHTS weights, else "adagrad"; any other value is itself.

    >>> resolve_catalogue_oracle("auto", "dense", 231), resolve_catalogue_oracle("auto", "dense", 8635)
    ('ridge', 'adagrad')
    >>> resolve_catalogue_oracle("auto", "hashed", 2 ** 18), resolve_catalogue_oracle("normalized", "dense", 10)
    ('adagrad', 'normalized')
    """
    if oracle != "auto":
        return oracle
    return "ridge" if features == "dense" and n_weights <= AUTO_RIDGE_MAX_WEIGHTS else "adagrad"
_LINEAR = {"all": LIN_CONTEXT | LIN_ITEM | LIN_BIAS, "item": LIN_ITEM, "none": 0}
_NO_Q = np.ones((1, 1), np.int8)
_EMPTY = np.zeros(0)


def _with_norms(indptr, idx, val, ns) -> tuple:
    inv = np.empty(indptr.shape[0] - 1)
    inv_norms(indptr, val, inv)
    return indptr, idx, val, ns, inv


def _dense_view(X) -> tuple:
    """(indptr, idx, val, ns, 1/‖row‖) of a dense or CSR matrix: each row's non-zeros in column order."""
    M = X if sp.issparse(X) else sp.csr_matrix(X)
    M = sp.csr_matrix(M, dtype=np.float64)
    M.eliminate_zeros()
    return _with_norms(M.indptr.astype(np.int64), M.indices.astype(np.int64), np.ascontiguousarray(M.data),
                       np.zeros(M.indices.shape[0], np.int64))


def _hashed_view(H: HashedRows) -> tuple:
    return _with_norms(np.ascontiguousarray(H.indptr, np.int64), np.ascontiguousarray(H.hashes, np.int64),
                       np.ascontiguousarray(H.values, np.float64), np.ascontiguousarray(H.ns, np.int64))


def kernel_rounds(rounds: CandidateRounds, hashed: bool) -> tuple:
    """(context view, item view, namespaces) of rounds for the kernels (kept on the rounds object)."""
    cache = rounds.__dict__.setdefault("_kernel_views", {})
    got = cache.get(hashed)
    if got is None:
        if hashed:
            h = rounds.to_hashed()
            got = (_hashed_view(h.context), _hashed_view(h.items), h.context.namespaces)
        else:
            got = (_dense_view(rounds.context), _dense_view(rounds.items), ())
        cache[hashed] = got
    return got


class CatalogueOracle(Learner):
    """Regression oracle over context × candidate features with a policy over each round's candidates.

    Subclasses set ``_policy`` and implement ``_explore()`` -> (explore, gamma_exponent)."""

    feedback_kind: ClassVar[str] = "catalogue"
    #: family "catalogue": rounds of candidates (CandidateRounds), not (X, y); not yet served
    _tags = Tags(family="catalogue", online=True)
    _policy: ClassVar[int] = 0
    _common_constraints: ClassVar[dict] = {
        "learning_rate": Interval(0, None, closed="neither"),
        "oracle": Options(("auto", "adagrad", "normalized", "ridge")),
        "lam": Interval(0, None, closed="neither"),
        "features": Options(("dense", "hashed")),
        "bits": Integer(1, 30),
        "linear": Options(("all", "item", "none")),
        "item_norm": Options(("unit", "none")),
        "context_norm": Options(("auto", "unit", "none")),
        "n_slots": Integer(1),
        "rho0": Interval(0, 1, closed="left"),
        "rho1": Interval(0, 1, closed="left"),
        "seed": AnySeed(),
    }
    _learned_state: ClassVar[dict] = {
        # the oracle in use ("auto" resolved at the first fit from the features and the number of weights)
        "oracle_": Options(("adagrad", "normalized", "ridge")),
        "context_dim_": Integer(0),
        "item_dim_": Integer(0),
        "weights_": Array(lambda p: (2 ** p["bits"],) if p.get("features") == "hashed" else ("D",)),
        "sum_sq_grad_": Array(lambda p: (2 ** p["bits"],) if p.get("features") == "hashed" else ("D",)),
        "ridge_inverse_": Array(lambda p: ("D", "D") if p.get("oracle_", p.get("oracle")) == "ridge" else (0, 0)),
        "n_updates_": Array((1,), dtype="int64"),
        "exam_clicks_": Array(("n_slots",)),
        "exam_scores_": Array(("n_slots",)),
        # greedy first (CatalogueSquareCB): [rounds learned at the switch, or -1; the window's ratio sum, count]
        "exploration_": Array((3,)),
        # the ridge penalty's scale: [‖x̂‖², mean ‖ẑ‖²] of the first round seen (1 for a zero side)
        "feature_scale_": Array((2,)),
    }
    #: model files saved before ``oracle_`` existed (an explicit oracle) still load: without it the oracle is
    #: the parameter; a file saved with oracle="auto" always records the oracle it resolved to
    #: and model files saved before ``exploration_`` existed load without it (no switch made yet)
    #: (and ``feature_scale_``: older files scaled the penalty by nothing, and their "auto" context is x/‖x‖)
    _optional_state = staticmethod(lambda p: ("exploration_", "feature_scale_")
                                   + (("oracle_",) if p.get("oracle") != "auto" else ()))

    # ------------------------------------------------------------ params
    def _check_params(self) -> None:
        name = type(self).__name__
        if self.rho0 + self.rho1 >= 1:
            raise ValueError(f"The 'rho0' and 'rho1' parameters of {name} must satisfy rho0 + rho1 < 1. "
                             f"Got rho0={self.rho0!r}, rho1={self.rho1!r} instead.")
        if self.oracle == "ridge" and self.features == "hashed":
            raise ValueError(f"The 'oracle' parameter of {name} must be 'adagrad' or 'normalized' with "
                             f"features='hashed' (ridge keeps a D×D matrix, D = 2^bits). Got 'ridge' instead.")
        inter = self.interactions
        if inter is not None:
            ok = isinstance(inter, (tuple, list)) and all(isinstance(s, str) and len(s) == 2 for s in inter)
            if not ok:
                raise ValueError(f"The 'interactions' parameter of {name} must be None (every context namespace "
                                 f"× every item namespace) or a tuple of two-letter strings as VW's -q ('ua': "
                                 f"namespaces starting with 'u' × those starting with 'a'; ':' any). Got {inter!r} "
                                 f"instead.")
            if self.features != "hashed":
                raise ValueError(f"The 'interactions' parameter of {name} selects namespaces of hashed features; "
                                 f"with features='dense' it must be None. Got {inter!r} instead.")
        ex = self.examination
        if ex is not None:
            arr = np.asarray(ex, dtype=np.float64) if isinstance(ex, (tuple, list, np.ndarray)) else None
            if arr is None or arr.shape != (self.n_slots,) or not ((arr > 0) & (arr <= 1)).all():
                raise ValueError(f"The 'examination' parameter of {name} must be None (estimated) or "
                                 f"{self.n_slots} probabilities in (0, 1], one per slot. Got {ex!r} instead.")

    def _explore(self) -> tuple[float, float]:
        raise NotImplementedError

    def _schedule_t(self) -> int:
        """t of γ_t = γ·(t+1)^γ_exp: the rounds learned, counted again from greedy first's switch."""
        t = int(self.n_updates_[0])
        if self._adapt()[2] and self.exploration_[0] >= 0:
            t -= int(self.exploration_[0])
        return t

    def _adapt(self) -> tuple[float, float, bool]:
        """(explore before the switch, explore after it, whether the greedy-first check runs): kernel arguments
        of learn and simulate. Fixed exploration here."""
        x = self._explore()[0]
        return x, x, False

    @property
    def draws_per_round(self) -> int:
        """Uniforms a round: one per slot."""
        return int(self.n_slots)

    # ------------------------------------------------------------- state
    def _dims(self, rounds: CandidateRounds) -> tuple[int, int]:
        if self.features == "hashed":
            return 0, 0
        if rounds.hashed:
            raise TypeError(f"{type(self).__name__}(features='dense') takes numeric context and item arrays; "
                            "these rounds hold hashed features (use features='hashed').")
        return rounds.n_context_features, rounds.n_item_features

    def _n_weights(self, d_c: int, d_a: int) -> int:
        return 2 ** int(self.bits) if self.features == "hashed" else d_c * d_a + d_a + d_c + 1

    def _init_state(self, rounds: CandidateRounds | None, seed_fallback=None, dims: tuple | None = None) -> None:
        if not hasattr(self, "weights_"):
            self._validate_params()
            d_c, d_a = dims if dims is not None else self._dims(rounds)
            D = self._n_weights(d_c, d_a)
            oracle = resolve_catalogue_oracle(self.oracle, self.features, D)
            check_memory(16.0 * D + (8.0 * D * D if oracle == "ridge" else 0.0),
                         f"{type(self).__name__} weights ({D})")
            self.oracle_ = oracle
            self.context_dim_ = int(d_c)
            self.item_dim_ = int(d_a)
            self.weights_ = np.zeros(D)
            self.sum_sq_grad_ = np.zeros(D)
            self.ridge_inverse_ = (np.eye(D) / float(self.lam)) if oracle == "ridge" else np.zeros((0, 0))
            self.n_updates_ = np.zeros(1, np.int64)
            self.exam_clicks_ = np.zeros(int(self.n_slots))
            self.exam_scores_ = np.zeros(int(self.n_slots))
            self.exploration_ = np.array([-1.0, 0.0, 0.0])
            self.feature_scale_ = np.ones(2)  # (present before the views are read: a new model, not an old file)
            if rounds is not None:
                self.feature_scale_ = self._first_round_scale(rounds)
            if oracle == "ridge":
                self.ridge_inverse_ = self._ridge_prior(D)
        if not hasattr(self, "rng_"):
            seed = self.seed
            self.rng_ = make_rng(seed if seed is not None else seed_fallback)

    def _context_norm(self) -> str:
        """"unit" or "none": ``context_norm``, "auto" resolved by the oracle (none with ridge, unit otherwise)."""
        if self.context_norm != "auto":
            return self.context_norm
        if hasattr(self, "weights_"):
            if not hasattr(self, "feature_scale_"):  # a model file saved before the context kept its scale
                return "unit"
            oracle = self._oracle()
        else:  # before the first round: the sizes are not known (the oracle is resolved from them then)
            oracle = resolve_catalogue_oracle(self.oracle, self.features, self._n_weights(0, 0))
        return "none" if oracle == "ridge" else "unit"

    def _first_round_scale(self, rounds: CandidateRounds) -> np.ndarray:
        """[‖x̂‖², mean ‖ẑ‖²] of the first round as the oracle sees it (1 where that is 0)."""
        if self.features == "hashed" or rounds.n_rounds == 0:
            return np.ones(2)
        c, a, _ = self._views(rounds)
        c_indptr, _, c_val, _, c_inv = c
        a_indptr, _, a_val, _, a_inv = a
        x = c_val[c_indptr[0]:c_indptr[1]] * c_inv[0]
        n = int(rounds.offsets[1])
        z = np.array([np.sum((a_val[a_indptr[r]:a_indptr[r + 1]] * a_inv[r]) ** 2) for r in range(n)])
        sx, sz = float(np.sum(x * x)), float(np.mean(z))
        return np.array([sx if sx > 0 and np.isfinite(sx) else 1.0, sz if sz > 0 and np.isfinite(sz) else 1.0])

    def _ridge_prior(self, D: int) -> np.ndarray:
        """P at the start: diag(1/(λ·s_k²)), s_k² the scale of what weight k multiplies (``lam``)."""
        sx, sz = getattr(self, "feature_scale_", np.ones(2))
        d_c, d_a = self.context_dim_, self.item_dim_
        s2 = np.ones(D)
        s2[:d_c * d_a] = sx * sz
        s2[d_c * d_a:d_c * d_a + d_a] = sz
        s2[d_c * d_a + d_a:d_c * d_a + d_a + d_c] = sx
        return np.diag(1.0 / (float(self.lam) * s2))

    def _check_rounds(self, rounds, fitting: bool) -> CandidateRounds:
        self._validate_params()
        if isinstance(rounds, CandidateStream):
            rounds = rounds.rounds
        if not isinstance(rounds, CandidateRounds):
            raise TypeError(f"{type(self).__name__} takes CandidateRounds (a context and a candidate list per "
                            f"round); got {type(rounds).__name__}.")
        d_c, d_a = self._dims(rounds)
        if hasattr(self, "weights_") and self.features == "dense" and (d_c, d_a) != (self.context_dim_,
                                                                                     self.item_dim_):
            raise ValueError(f"these rounds have {d_c} context and {d_a} item features, but {type(self).__name__} "
                             f"was fitted with {self.context_dim_} and {self.item_dim_}.")
        if fitting:
            self._init_state(rounds)
        return rounds

    def _state(self) -> tuple:
        """Kernel arguments of the model; checks a loaded model's sizes against each other."""
        D = self._n_weights(self.context_dim_, self.item_dim_)
        if self.weights_.shape != (D,) or self.sum_sq_grad_.shape != (D,):
            raise ValueError(f"{type(self).__name__}: weights_ has {self.weights_.shape[0]} entries; "
                             f"context_dim_={self.context_dim_}, item_dim_={self.item_dim_} need {D}.")
        if not hasattr(self, "exploration_"):  # a model file saved before greedy first
            self.exploration_ = np.array([-1.0, 0.0, 0.0])
        ridge = self._oracle() == "ridge"
        want = (D, D) if ridge else (0, 0)
        if self.ridge_inverse_.shape != want:  # the oracle changed since fitting: ridge restarts from its prior
            self.ridge_inverse_ = self._ridge_prior(D) if ridge else np.zeros((0, 0))
        mode = MODE_HASHED if self.features == "hashed" else MODE_DENSE
        return mode, _LINEAR[self.linear], self.context_dim_, self.item_dim_, (2 ** int(self.bits) - 1)

    def _oracle(self) -> str:
        """The oracle in use: ``oracle_`` once fitted ("auto" resolved), the parameter if it was changed since
        (then recorded), else the parameter resolved (a model loaded from a file saved without ``oracle_``)."""
        fitted = getattr(self, "oracle_", None)
        if fitted is None or not (self.oracle == "auto" or self.oracle == fitted):
            fitted = self.oracle_ = resolve_catalogue_oracle(self.oracle, self.features, self.weights_.shape[0])
        if fitted == "ridge" and self.features == "hashed":  # only a doctored model file gets here
            raise ValueError(f"{type(self).__name__}: oracle_='ridge' needs dense features (ridge keeps a D×D "
                             f"matrix; hashed features have D = 2^bits weights). Got features='hashed'.")
        return fitted

    def _exam_given(self) -> np.ndarray:
        return _EMPTY if self.examination is None else np.asarray(self.examination, dtype=np.float64)

    def _q(self, namespaces: tuple) -> np.ndarray:
        """Q[i, j] = 1 where context namespace i interacts with item namespace j (VW's -q on first letters)."""
        if self.features != "hashed":
            return _NO_Q
        n = max(len(namespaces), 1)
        if self.interactions is None:
            return np.ones((n, n), np.int8)
        Q = np.zeros((n, n), np.int8)
        first = [ns[:1] for ns in namespaces]
        for pair in self.interactions:
            a, b = pair[0], pair[1]
            for i, fa in enumerate(first):
                for j, fb in enumerate(first):
                    if (a == ":" or a == fa) and (b == ":" or b == fb):
                        Q[i, j] = 1
        return Q

    def _views(self, rounds: CandidateRounds) -> tuple:
        c, a, names = kernel_rounds(rounds, self.features == "hashed")
        if self._context_norm() == "none":  # x̂ = x
            c = self._as_given(rounds, c, "raw context")
        if self.item_norm == "none":  # ẑ = z
            a = self._as_given(rounds, a, "raw items")
        return c, a, self._q(names)

    def _as_given(self, rounds: CandidateRounds, view: tuple, name: str) -> tuple:
        """``view`` with its rows' scale factors 1 (the rows as given), kept with the rounds' kernel views."""
        cache = rounds.__dict__["_kernel_views"]
        key = (self.features == "hashed", name)
        if key not in cache:
            cache[key] = view[:4] + (np.ones_like(view[4]),)
        return cache[key]

    # ---------------------------------------------------------- inference
    def decision_function(self, rounds) -> np.ndarray:
        """The score f(x, z) of every candidate, flat (total,) aligned with the item rows; zeros before
        learning. With flips it estimates ρ0 + (1−ρ0−ρ1)·P(click | x, z) (first position)."""
        rounds = self._check_rounds(rounds, fitting=False)
        out = np.zeros(rounds.n_candidates)
        if hasattr(self, "weights_"):
            mode, lin, d_c, d_a, mask = self._state()
            c, a, Q = self._views(rounds)
            cat_values(mode, lin, self.weights_, d_c, d_a, mask, Q, *c, *a, rounds.offsets, out)
        return out

    def predict(self, rounds) -> np.ndarray:
        """Greedy choice: per round the position of the highest-scoring candidate (first on ties), (n,);
        with n_slots = k > 1 the top k positions, (n, k) (−1 past the round's candidates)."""
        rounds = self._check_rounds(rounds, fitting=False)
        v = self.decision_function(rounds)
        k = int(self.n_slots)
        out = np.full((rounds.n_rounds, k), -1, np.int64)
        for i in range(rounds.n_rounds):
            s = v[rounds.candidates(i)]
            order = np.argsort(-s, kind="stable")[:k]
            out[i, :order.shape[0]] = order
        return out[:, 0] if k == 1 else out

    def _act(self, rounds, u: np.ndarray, scores: np.ndarray = _NO_SCORES) -> tuple:
        """(chosen, probs, pis) of `kernels.catalogue.cat_act`; ``scores`` (total,) filled with the
        candidates' scores when given."""
        mode, lin, d_c, d_a, mask = self._state()
        c, a, Q = self._views(rounds)
        n, k = rounds.n_rounds, int(self.n_slots)
        chosen = np.empty((n, k), np.int64)
        probs = np.empty((n, k))
        pis = np.empty(rounds.n_candidates)
        explore, expo = self._explore()
        cat_act(mode, lin, self.weights_, d_c, d_a, mask, Q, *c, *a, rounds.offsets, k, self._policy, explore, expo,
                self._schedule_t(), u, chosen, probs, pis, scores)
        return chosen, probs, pis

    def action_probabilities(self, rounds, return_scores: bool = False):
        """The distribution ``act`` draws the first slot from: per candidate, flat (total,) aligned with the
        item rows (each round's entries sum to 1); with ``return_scores``, (distribution, scores), the
        scores those of `decision_function`, computed once for both."""
        rounds = self._check_rounds(rounds, fitting=True)
        scores = np.empty(rounds.n_candidates) if return_scores else _NO_SCORES
        pis = self._act(rounds, np.zeros(rounds.n_rounds * int(self.n_slots)), scores)[2]
        return (pis, scores) if return_scores else pis

    # -------------------------------------------------------- act / learn
    def act(self, rounds) -> tuple[np.ndarray, np.ndarray]:
        """Draw per round one candidate (positions in the round's list, (n,), and P(chosen), (n,)); with
        n_slots = k > 1 k distinct candidates, (n, k), and each slot's conditional probability, (n, k)
        (−1 and 1.0 past the round's candidates)."""
        rounds = self._check_rounds(rounds, fitting=True)
        u = self.rng_.random(rounds.n_rounds * int(self.n_slots))
        chosen, probs, _ = self._act(rounds, u)
        if self.n_slots == 1:
            return chosen[:, 0].copy(), probs[:, 0].copy()
        return chosen, probs

    def act_excluding(self, rounds, excluded) -> tuple[np.ndarray, np.ndarray]:
        """`act` with per-slot exclusions: ``excluded`` (total candidates, n_slots) booleans, True where a
        candidate may not fill that slot. Slot by slot, the policy over the candidates neither placed nor
        excluded for the slot (the same formula as `act`'s over the free ones), one uniform a slot (k a
        round, as `act`); a slot with no such candidate stays empty (−1, probability 1.0)."""
        from ...kernels.catalogue import draw, explore_at, policy

        rounds = self._check_rounds(rounds, fitting=True)
        n, k = rounds.n_rounds, int(self.n_slots)
        ex = np.asarray(excluded, dtype=bool)
        if ex.shape != (rounds.n_candidates, k):
            raise ValueError(f"excluded must have shape ({rounds.n_candidates}, {k}) (candidates × n_slots); got "
                             f"{ex.shape}.")
        u = self.rng_.random(n * k)
        scores = np.asarray(self.decision_function(rounds), dtype=np.float64)
        explore, expo = self._explore()
        x = float(explore_at(self._policy, explore, expo, self._schedule_t()))
        chosen = np.full((n, k), -1, np.int64)
        probs = np.ones((n, k))
        for i in range(n):
            lo, hi = int(rounds.offsets[i]), int(rounds.offsets[i + 1])
            m = hi - lo
            v = np.ascontiguousarray(scores[lo:hi])
            placed = np.zeros(m, np.int8)
            pi = np.empty(m)
            for s in range(k):
                busy = (placed | ex[lo:hi, s]).astype(np.int8)
                if busy.all():
                    continue
                policy(v, m, self._policy, x, busy, pi)
                r = int(draw(pi, m, busy, u[i * k + s]))
                chosen[i, s], probs[i, s] = r, pi[r]
                placed[r] = 1
        if k == 1:
            return chosen[:, 0].copy(), probs[:, 0].copy()
        return chosen, probs

    def _check_logged(self, rounds: CandidateRounds, actions, feedback, propensities) -> tuple:
        n, k = rounds.n_rounds, int(self.n_slots)
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integer positions in each round's candidate list; got dtype {a.dtype}.")
        a = a.astype(np.int64).reshape(n, -1) if a.size == n * k else a
        if a.shape != (n, k):
            shapes = f"({n},) or ({n}, 1)" if k == 1 else f"({n}, {k}) (one candidate a slot) or ({n * k},)"
            raise ValueError(f"actions must have shape {shapes} (n_slots={k}); got {np.shape(actions)}.")
        sizes = rounds.sizes
        bad = (a >= sizes[:, None]) | (a < -1)  # -1: the slot was not shown (a page of fewer slots, or
        # past the round's candidates), never learned
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"actions: row {row} has {a[row].tolist()}, outside its {int(sizes[row])} candidates.")
        for s in range(1, k):  # distinct candidates on a page
            dup = ((a[:, s:s + 1] == a[:, :s]) & (a[:, s:s + 1] >= 0)).any(axis=1)
            if dup.any():
                raise ValueError(f"actions: row {int(np.flatnonzero(dup)[0])} places a candidate in two slots.")
        f = np.asarray(feedback)
        if f.size != n * k:
            raise ValueError(f"feedback must have {n * k} entries ({n} rounds × {k} slots); got shape {f.shape}.")
        flips = f"rho0={self.rho0!r}, rho1={self.rho1!r}" if (self.rho0 or self.rho1) else None
        f = check_rewards(f.reshape(n, k) if k > 1 else f.reshape(n), n, type(self).__name__, flips, width=k)
        f = f.reshape(n, k)
        p = np.asarray(propensities, dtype=np.float64) if propensities is not None else None
        if p is None or p.size != n * k:
            raise ValueError(f"propensities must have {n * k} entries (P of each logged choice).")
        p = p.reshape(n, k)
        badp = ~((p > 0) & (p <= 1))
        if badp.any():
            raise ValueError(f"propensities must be in (0, 1]; row {int(np.flatnonzero(badp.any(axis=1))[0])} "
                             "is not.")
        return np.ascontiguousarray(a), np.ascontiguousarray(f)

    def learn(self, rounds, actions, feedback, propensities):
        """Update from logged rounds in order: the chosen candidate(s) (positions), their rewards (per slot:
        0/1 clicks or any real-valued reward, fitted as it is; with flip rates ``rho0``/``rho1`` clicks only),
        their propensities (checked; the regression oracle needs no importance weights). Returns self."""
        rounds = self._check_rounds(rounds, fitting=True)
        a, f = self._check_logged(rounds, actions, feedback, propensities)
        mode, lin, d_c, d_a, mask = self._state()
        c, av, Q = self._views(rounds)
        adapt = self._adapt()[2]
        cat_learn(mode, _ORACLES[self._oracle()], lin, self.weights_, self.sum_sq_grad_, self.ridge_inverse_,
                  self.n_updates_, self._exam_given(), self.exam_clicks_, self.exam_scores_, d_c, d_a, mask, Q, *c,
                  *av, rounds.offsets, a, f, float(self.learning_rate), adapt, self.exploration_)
        return self

    def fit_logged(self, rounds, actions, rewards, propensities):
        """Train from scratch on logged rounds (discards learned state, then `learn`). Returns self."""
        self._reset()
        return self.learn(rounds, actions, rewards, propensities)

    def examination_estimates(self) -> np.ndarray:
        """The examination factors c_s in use (given, or the current estimates), relative to slot 1."""
        from ...kernels.catalogue import exam_factor
        return np.array([exam_factor(s, self._exam_given(), self.exam_clicks_, self.exam_scores_)
                         for s in range(int(self.n_slots))])

    # ----------------------------------------------------------- simulate
    # nf.simulate on a candidate stream (noisyfeedback.simulate.simulate_catalogue) runs this compiled chunk
    def _simulate_chunk(self, rounds: CandidateRounds, stream: CandidateStream, rows, u_learner, rho0, rho1,
                        u_flip, u_click, mistakes, regret, clicks) -> None:
        mode, lin, d_c, d_a, mask = self._state()
        c, a, Q = self._views(rounds)
        high, low, adapt = self._adapt()
        k = int(self.n_slots)
        cat_simulate(mode, _ORACLES[self._oracle()], self._policy, lin, self.weights_, self.sum_sq_grad_,
                     self.ridge_inverse_, self.n_updates_, self._exam_given(), self.exam_clicks_, self.exam_scores_,
                     d_c, d_a, mask, Q, *c, *a, rounds.offsets, rows, stream.rewards, stream.examination_for(k), k,
                     high, low, adapt, self.exploration_, self._explore()[1],
                     float(self.learning_rate), rho0, rho1, u_learner, u_flip, u_click, mistakes, regret, clicks)
