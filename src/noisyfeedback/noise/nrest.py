"""NREst: the noise-rate estimator of Agarwal & Manwani (2021), Algorithm 3."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import Integer, Interval, Options, check_param
from ._common import check_tuples, clip_rates, seed_ints, uninformative

__all__ = ["estimate_nrest", "NRESTCombine"]

_OWNER = "estimate_flip_rates(method='nrest')"
NRESTCombine = ("pooled", "per_arm", "counterfactual")


def estimate_nrest(
    X: Any,
    actions: Any,
    feedback: Any,
    n_classes: int,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    hidden_layer_sizes: tuple[int, ...] = (128, 128),
    max_epochs: int = 70,
    patience: int | None = 10,
    percentile: float = 89.0,
    combine: str = "pooled",
    alpha: float = 1e-4,
    batch_size: int = 128,
    learning_rate_init: float = 1e-3,
    normalize_rows: bool = True,
) -> tuple[float, float]:
    """The paper's NREst: a network for P(f̃=1 | x, a), read at "perfect examples".

    Because P(f̃=1 | x, a) = ρ0 + (1−ρ0−ρ1)·P(y=a | x), an example the network is
    sure is right gives 1 − ρ1 and one it is sure is wrong gives ρ0 (Theorem 2).

    What we implement, and how we read the paper:

    - **Classifier.** A scikit-learn ``MLPClassifier`` (ReLU, ``hidden_layer_sizes``;
      the paper's MNIST network is 2×128, its output a 2-way softmax, which a
      logistic output equals) on [x, one-hot(a)], with x scaled to unit norm
      (``normalize_rows``, as the authors' code does; their code appends the
      arm as one integer column, the paper says "x concatenated with ỹ", docs/algorithms.md
      §4.5 one-hot — we use one-hot). Split as the paper says: 90 % train /
      10 % test (held out, unused), 10 % of the train part for validation;
      up to ``max_epochs`` epochs (the paper: 70) of minibatch 128, keeping the
      weights of the epoch with the lowest validation cross-entropy (the
      authors' checkpointing). Departures forced by scikit-learn: Adam
      (``learning_rate_init``) instead of AdaGrad with rate 0.01, an L2 penalty
      ``alpha`` instead of dropout 0.2, and we stop after ``patience`` epochs
      without a better validation loss (None: never).
    - **Perfect examples and the 89 %-percentile.** "Instead of argmax eq (6),
      we take 89%-percentile". The authors' code (``NoiseEstimator``, after
      Patrini et al. 2017) treats the two feedback values as the classes: the
      perfect example of output i is the training tuple with the largest
      P̂(f̃=i) strictly below the 89th percentile (``method='higher'``) of
      P̂(f̃=i), over all training tuples pooled, each with its logged arm. Row i
      of the 2×2 matrix T is the network's output at that example, so
      ρ̂0 = T[0, 1] (= P̂(f̃=1) at a sure-wrong tuple, ≈ the 11th percentile of
      q) and ρ̂1 = T[1, 0] (= 1 − the 89th percentile of q).
    - **Normalisation.** "We normalize ρ̂0, 1−ρ̂0 and ρ̂1, 1−ρ̂1 such that they
      sum up to 1": the rows of T are divided by their sums. With a softmax /
      logistic output each row already sums to 1, so the step changes nothing;
      we keep it for fidelity.
    - **Classes** (``combine``). ``"pooled"`` (default) is the above, the
      authors' code. ``"per_arm"`` applies it among the tuples of each arm j
      (percentiles of q(x, j) over a = j) and averages the arms' ρ̂0 and ρ̂1.
      ``"counterfactual"`` is Algorithm 3 read literally: for each j the perfect
      example x^j is taken at the percentile of q(x, j) over all training x
      (every x scored with arm j), 1 − ρ̂1 = mean_j q(x^j, j) and
      ρ̂0 = mean over j and l ≠ j of q(x^j, l).

    Estimates are finally clipped to the valid region (ρ0, ρ1 ≥ 0, ρ0 + ρ1 < 1).

    Known weakness (measured, not tuned away): the percentile assumes that at
    least 11 % of the tuples are confidently wrong *and* 11 % confidently
    right. With a good logging policy and little noise fewer than 11 % of the
    tuples have f̃ = 0; the "perfect example" of f̃ = 0 is then a right tuple
    and ρ̂0 ≈ 1 (SynSep, ρ = (0, 0), Banditron tuples: ρ̂0 = 0.999; the authors'
    code uses the 94th percentile for SynSep). On MNIST tuples (N_s = 50 000)
    its errors reached 0.095 (ρ1 = 0.4 estimated as 0.495 — the paper's
    Table 1 has 0.508).

    Parameters
    ----------
    X, actions, feedback, n_classes, seed
        As `noisyfeedback.noise.estimate_flip_rates`. ``seed`` fixes the
        splits, the initial weights and the minibatch order.
    hidden_layer_sizes : tuple of int
    max_epochs : int >= 1
    patience : int >= 1 or None
    percentile : float in (50, 100)
    combine : {"pooled", "per_arm", "counterfactual"}
    alpha, batch_size, learning_rate_init
        Passed to ``MLPClassifier``.
    normalize_rows : bool
        Scale each x to unit Euclidean norm first.

    References
    ----------
    Agarwal, M. & Manwani, N. (2021). Learning multiclass classifier under noisy
    bandit feedback. PAKDD. — Patrini, G. et al. (2017). Making deep neural
    networks robust to label noise: a loss correction approach. CVPR.
    """
    X, actions, feedback = check_tuples(X, actions, feedback, n_classes, seed, _OWNER)
    _check_options(hidden_layer_sizes, max_epochs, patience, percentile, combine, alpha, batch_size,
                   learning_rate_init, normalize_rows)
    if uninformative(feedback, 20, _OWNER):
        return 0.0, 0.0
    K = int(n_classes)
    clf, Xtr, atr = _fit_network(X, actions, feedback, K, seed, hidden_layer_sizes, max_epochs, patience,
                                 alpha, batch_size, learning_rate_init, normalize_rows)
    return _read_rates(clf, Xtr, atr, K, percentile, combine)


def _check_options(hidden_layer_sizes, max_epochs, patience, percentile, combine, alpha, batch_size,
                   learning_rate_init, normalize_rows) -> None:
    sizes = tuple(hidden_layer_sizes) if isinstance(hidden_layer_sizes, (tuple, list)) else None
    if not sizes or not all(Integer(1).accepts(h) for h in sizes):
        raise ValueError(
            f"The 'hidden_layer_sizes' parameter of {_OWNER} must be a non-empty tuple of ints >= 1. "
            f"Got {hidden_layer_sizes!r} instead."
        )
    check_param("max_epochs", max_epochs, Integer(1), _OWNER)
    if patience is not None:
        check_param("patience", patience, Integer(1), _OWNER)
    check_param("percentile", percentile, Interval(50, 100, closed="neither"), _OWNER)
    check_param("combine", combine, Options(NRESTCombine), _OWNER)
    check_param("alpha", alpha, Interval(0, None), _OWNER)
    check_param("batch_size", batch_size, Integer(1), _OWNER)
    check_param("learning_rate_init", learning_rate_init, Interval(0, None, closed="neither"), _OWNER)
    check_param("normalize_rows", normalize_rows, Options((True, False)), _OWNER)


def _inputs(X, actions, K: int):
    """[x, one-hot(a)], dense or CSR like X."""
    n = X.shape[0]
    onehot = sp.csr_matrix((np.ones(n), (np.arange(n), actions)), shape=(n, K))
    if sp.issparse(X):
        return sp.hstack([X, onehot], format="csr")
    return np.hstack([X, onehot.toarray()])


def _fit_network(X, actions, feedback, K, seed, hidden_layer_sizes, max_epochs, patience, alpha, batch_size,
                 learning_rate_init, normalize_rows):
    """Train the MLP with the paper's splits; returns (classifier, training contexts, training arms)."""
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    split_seed, val_seed, net_seed = seed_ints(seed, 3)
    n = X.shape[0]
    rows = np.arange(n)
    strat = feedback if np.bincount(feedback, minlength=2).min() >= 2 else None
    train, _test = train_test_split(rows, test_size=0.1, random_state=split_seed, stratify=strat)
    strat = feedback[train] if np.bincount(feedback[train], minlength=2).min() >= 2 else None
    fit_rows, val_rows = train_test_split(train, test_size=0.1, random_state=val_seed, stratify=strat)
    if normalize_rows:
        from sklearn.preprocessing import normalize

        X = normalize(X)
    Zall = _inputs(X, actions, K)
    Zfit, Zval = Zall[fit_rows], Zall[val_rows]
    ffit, fval = feedback[fit_rows], feedback[val_rows]
    clf = MLPClassifier(hidden_layer_sizes=tuple(hidden_layer_sizes), activation="relu", solver="adam",
                        alpha=alpha, batch_size=min(batch_size, len(fit_rows)),
                        learning_rate_init=learning_rate_init, shuffle=True, random_state=net_seed)
    best_loss, best_state, since_best = np.inf, None, 0
    for epoch in range(1, max_epochs + 1):
        clf.partial_fit(Zfit, ffit, classes=np.array([0, 1]))
        loss = log_loss(fval, clf.predict_proba(Zval)[:, 1], labels=[0, 1])
        if loss < best_loss - 1e-12:
            best_loss, since_best, clf.nrest_best_epoch_ = loss, 0, epoch
            best_state = (copy.deepcopy(clf.coefs_), copy.deepcopy(clf.intercepts_))
        else:
            since_best += 1
            if patience is not None and since_best >= patience:
                break
    clf.coefs_, clf.intercepts_ = best_state
    clf.nrest_epochs_ = epoch
    return clf, X[train], actions[train]


def _perfect_index(values: np.ndarray, percentile: float) -> int:
    """The authors' robust argmax: the largest value strictly below the ('higher') percentile."""
    thresh = np.percentile(values, percentile, method="higher")
    robust = np.where(values >= thresh, -np.inf, values)
    if not np.isfinite(robust).any():
        return int(np.argmax(values))
    return int(np.argmax(robust))


def _rates_from_q(q: np.ndarray, percentile: float) -> tuple[float, float]:
    """(ρ̂0, ρ̂1) from P̂(f̃=1) of pooled tuples: rows of T at the two perfect examples, row-normalised."""
    eta = np.column_stack([1.0 - q, q])
    T = np.vstack([eta[_perfect_index(eta[:, i], percentile)] for i in (0, 1)])
    T = T / T.sum(axis=1, keepdims=True)
    return float(T[0, 1]), float(T[1, 0])


def _read_rates(clf, X, actions, K: int, percentile: float, combine: str) -> tuple[float, float]:
    """(ρ̂0, ρ̂1) from the trained network on the training tuples (contexts X, logged arms)."""

    def q_of(arm: int | None) -> np.ndarray:
        arms = actions if arm is None else np.full(X.shape[0], arm, dtype=np.int64)
        return clf.predict_proba(_inputs(X, arms, K))[:, 1]

    if combine == "pooled":
        rho0, rho1 = _rates_from_q(q_of(None), percentile)
    elif combine == "per_arm":
        q = q_of(None)
        per = [_rates_from_q(q[actions == j], percentile) for j in range(K) if (actions == j).any()]
        rho0, rho1 = (float(np.mean([p[i] for p in per])) for i in (0, 1))
    else:  # counterfactual: Algorithm 3 literally
        Q = np.column_stack([q_of(j) for j in range(K)])  # q(x, j) for every training x and arm
        best = [_perfect_index(Q[:, j], percentile) for j in range(K)]
        high = np.mean([Q[best[j], j] for j in range(K)])
        low = np.mean([Q[best[j], k] for j in range(K) for k in range(K) if k != j])
        rho0, rho1 = float(low), float(1.0 - high)
    return clip_rates(rho0, rho1)
