"""Loss-corrected multinomial logistic regression for labels corrupted by a confusion matrix.

Patrini et al. (2017). With C[r, q] = P(ỹ = r | y = q) and the model's clean class
probabilities p(x) = softmax(W x + b):

forward:  ℓ→(x, ỹ) = −log (C p(x))_ỹ = lse(z) − lse(z + log C[ỹ, :])
          ∂ℓ→/∂z = softmax(z) − softmax(z + log C[ỹ, :])
backward: ℓ←(x, ỹ) = Σ_j (C⁻¹)[j, ỹ]·(−log p_j(x)) = lse(z) − a·z,  a = C⁻¹[:, ỹ]  (Σ_j a_j = 1)
          ∂ℓ←/∂z = softmax(z) − a

Both are unbiased/consistent for the clean posterior: E[ℓ←(x, ỹ) | y] = −log p_y(x), and
the minimiser of E[ℓ→] gives C p(x) = the noisy posterior, hence p(x) = the clean one
(C invertible). Objective (scikit-learn's): ½‖W‖² + C_reg · Σ_i s_i ℓ(x_i, ỹ_i) (intercept
unpenalised), minimised by L-BFGS (scipy) with the analytic gradient above.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..._state import Array, Flag, Real
from ..._validation import AnySeed, Integer, Interval, OneOf, Options
from ...base import EstimatorMixin, Tags, make_rng
from ...feedback import check_confusion_matrix
from ...noise.confusion import estimate_confusion
from .uma import DEFAULT_MAX_CONDITION

__all__ = ["CorrectedLogisticRegression", "corrected_loss_grad", "estimate_confusion"]  # estimate_confusion: noise's

_CORRECTIONS = ("forward", "backward", "none")
_ESTIMATORS = ("confident_joint", "anchor")
_PROBA_MODELS = ("linear", "knn")
#: neighbours of the k-nearest-neighbour model of the noisy labels behind confusion="estimate" (proba_model):
#: 15 was the best of 10 / 15 / 25 on the tuning seeds 100–101 of Letter at noise 0.2 (benchmarks/RESULTS.md, "Label
#: noise")
KNN_NEIGHBOURS = 15
#: the out-of-fold fits behind confusion="estimate" stop at this multiple of ``tol`` (L-BFGS gradient tolerance):
#: their probabilities only feed the confident joint and the EM counts. 10 took the estimate from 7–9x to
#: 3.1–3.8x the time of a fit with C given on digits (default parameters, noise 0.3, tuning seeds 100–103) and
#: its max error from the realised confusion from 0.075 to 0.070, test error 0.106 -> 0.100 (benchmarks/RESULTS.md,
#: label issues)
OOF_TOL_FACTOR = 10.0


def _lse_softmax(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(logsumexp of each row, softmax of each row) of Z (n, K), stable, in one pass."""
    m = Z.max(axis=1, keepdims=True)
    E = np.exp(Z - m)
    S = E.sum(axis=1, keepdims=True)
    E /= S
    return np.log(S[:, 0]) + m[:, 0], E


def corrected_loss_grad(theta: np.ndarray, X, yi: np.ndarray, K: int, logC_rows: np.ndarray | None,
                        A_rows: np.ndarray | None, sw: np.ndarray, C_reg: float, fit_intercept: bool,
                        mu: np.ndarray | None = None):
    """(objective, gradient) of (1/Σs)·(½‖W‖²/C_reg + Σ_i s_i ℓ_i) at θ = (W (K·d), b (K)).

    ``logC_rows`` (n, K) = log C[ỹ_i, :] (forward), ``A_rows`` (n, K) = C⁻¹[:, ỹ_i] (backward),
    both None: the plain log-loss of ỹ. ``mu`` (d,): the scores are z = W(x − μ) + b (centred
    implicitly: X is neither copied nor densified). With an unpenalised intercept this is the same
    objective in the variables (W, b − Wμ), hence the same model, but far better conditioned when
    the features' means are large against their spread (MNIST: half the L-BFGS iterations)."""
    n, d = X.shape
    W = theta[: K * d].reshape(K, d)
    b = theta[K * d:] if fit_intercept else np.zeros(K)
    if mu is not None:
        b = b - W @ mu
    Z = np.asarray(X @ W.T)
    Z += b
    lse, P = _lse_softmax(Z)
    if A_rows is not None:
        li = lse - np.einsum("ik,ik->i", A_rows, Z)
        P -= A_rows
    elif logC_rows is None:
        li = lse - Z[np.arange(n), yi]
        P[np.arange(n), yi] -= 1.0
    else:
        Z += logC_rows
        lse2, T = _lse_softmax(Z)
        li = lse - lse2
        P -= T
    G = P
    tot = float(sw.sum())
    G *= (sw / tot)[:, None]
    f = float(sw @ li) / tot + 0.5 * float(np.sum(W * W)) / (C_reg * tot)
    gW = np.asarray(G.T @ X) if not sp.issparse(X) else np.asarray((X.T @ G).T)
    gb = G.sum(axis=0)
    if mu is not None:
        gW -= np.outer(gb, mu)
    gW += W / (C_reg * tot)
    grad = gW.ravel()
    if fit_intercept:
        grad = np.concatenate([grad, gb])
    return f, grad


class _PositiveList:
    """A non-empty sequence of positive finite floats (the candidates ``Cs``)."""

    def accepts(self, value) -> bool:
        try:
            a = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return False
        return a.ndim == 1 and a.size > 0 and bool(np.all(np.isfinite(a) & (a > 0)))

    def describe(self) -> str:
        return "a non-empty sequence of floats > 0"


class CorrectedLogisticRegression(EstimatorMixin, ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression trained on the noise-corrected log-loss [1]_.

    Labels ỹ are corrupted by a confusion matrix ``C[r, q] = P(ỹ = r | y = q)``
    (columns sum to 1). The model p(x) = softmax(W x + b) gives the CLEAN class
    probabilities; ``correction="forward"`` fits them through the noise,
    minimising ½‖W‖² + C_reg·Σ_i −log (C p(x_i))_{ỹ_i}; ``"backward"`` minimises
    the unbiased loss Σ_j C⁻¹[j, ỹ]·(−log p_j(x)); ``"none"`` the plain log-loss
    (scikit-learn's ``LogisticRegression`` objective). L-BFGS with the analytic
    gradient ∂ℓ→/∂z = softmax(z) − softmax(z + log C[ỹ, :]).

    Parameters
    ----------
    confusion : (K, K) array, "estimate" or None, default=None
        C (row/column k = ``classes_[k]``); None: the identity (plain logistic
        regression); "estimate": estimated from the noisy data by ``estimator``
        on ``n_folds``-fold cross-validated probabilities of a plain logistic regression.
        The C used is ``confusion_``; its condition number ``condition_number_``.
    correction : {"forward", "backward", "none"}, default="forward"
    C : float > 0, default=1.0
        Inverse regularisation strength (as scikit-learn's).
    fit_intercept : bool, default=True
    max_iter : int >= 1, default=500
        L-BFGS iterations.
    tol : float >= 0, default=1e-4
        L-BFGS gradient tolerance (scikit-learn's LogisticRegression default; 1e-6 took 3x the iterations on
        60,000 MNIST rows for the same test error).
    estimator : {"confident_joint", "anchor"}, default="confident_joint"
        How ``confusion="estimate"`` estimates C (see `estimate_confusion`).
    n_folds : int >= 2, default=5
        Cross-validation folds of ``"estimate"``.
    proba_model : {"linear", "knn"}, default="linear"
        The model of the noisy labels whose out-of-fold probabilities ``estimator`` reads
        (``confusion="estimate"``). "linear": the plain logistic regression (then ``refine``);
        "knn": 15 nearest neighbours on standardised features, probabilities the neighbours'
        noisy-label shares (no ``refine``: its EM step needs the linear model; sample weights
        are not used). A model that cannot fit the clean classes reads its own errors as noise:
        on Letter (linear test error 0.2) the linear estimate of C is off by 0.30–0.38, the kNN
        one by 0.05–0.09; where the linear model fits (digits, the UMA toy) the linear estimate is
        the closer one (kNN: 0.07–0.18 on the toy). Neither the noisy labels' out-of-fold log-loss
        nor their accuracy told the two cases apart on our data (benchmarks/RESULTS.md, "Label noise"), so
        the choice is the user's: "knn" when a linear model is known to fit the classes poorly.
    refine : int >= 0, default=1
        EM (Dawid–Skene) steps refining the ``"estimate"`` of C from out-of-fold clean probabilities
        of the model forward-corrected by the current estimate (see ``_estimate``). One step brought the
        max error of C from 0.06–0.17 to 0.03–0.10 on the tuning seeds of digits and the UMA toy at
        noise 0.2 (benchmarks/RESULTS.md, "Label noise"), near the sampling error of the realised labels
        themselves; more steps drifted on digits. 0: ``estimator`` alone. The plain model behind the
        estimate uses the ``Cs`` candidate of least cross-validated log-loss of the noisy labels
        (``estimate_C_``), else ``C``.
    max_condition : float >= 1, default=1e8
        Largest accepted condition number of C (as UMA); forward correction also
        refuses a singular C (its classes could not be told apart).
    learning_rate : float > 0, default=0.5
        Step of ``partial_fit`` (AdaGrad on the same objective).
    Cs : sequence of floats > 0 or None, default=None
        Candidates for C: the one of least ``n_folds``-fold cross-validated
        forward-corrected log-loss of the noisy labels is used (``C_``); this
        selection needs no clean label. None: ``C``.
    seed : int or None
        Seed of the cross-validation folds (``"estimate"``, ``Cs``, ``prune``).
    prune : bool, default=False
        Drop the rows flagged as mislabelled, then refit (``fit`` only). The rows are those of
        `noisyfeedback.find_label_issues` with this model: out-of-fold (``n_folds``) clean
        probabilities p of the model forward-corrected by C, the score P(y ≠ ỹ | x, ỹ) = 1 −
        C[ỹ, ỹ] p_ỹ(x) / Σ_j C[ỹ, j] p_j(x), the m = n Σ_q π_q (1 − C[q, q]) highest flagged
        (``label_issues_``). The kept rows are no longer noisy at the rate C: the refit is
        forward-corrected by their residual confusion ``pruned_confusion_``[r, q] =
        Σ_{kept, ỹ_i = r} Q_i(q) / Σ_{kept} Q_i(q), Q_i(q) ∝ C[ỹ_i, q] p_q(x_i) the posterior of the
        true class (near the identity when the flags are right; ``confusion_`` stays the C of all rows).

    Examples
    --------
    >>> import numpy as np
    >>> import noisyfeedback as nf
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.preprocessing import scale
    >>> X, y = load_digits(return_X_y=True); X = scale(X)
    >>> rng = np.random.default_rng(0)
    >>> K, rho = 10, 0.4
    >>> Cm = np.full((K, K), rho / (K - 1)); np.fill_diagonal(Cm, 1 - rho)
    >>> y_noisy = np.array([rng.choice(K, p=Cm[:, t]) for t in y])
    >>> clf = nf.CorrectedLogisticRegression(confusion=Cm, C=0.05).fit(X[:1200], y_noisy[:1200])
    >>> bool(clf.score(X[1200:], y[1200:]) > 0.85)
    True

    References
    ----------
    .. [1] Patrini, G., Rozza, A., Menon, A. K., Nock, R. & Qu, L. (2017). Making deep
       neural networks robust to label noise: a loss correction approach. CVPR.
    .. [2] Northcutt, C., Jiang, L. & Chuang, I. (2021). Confident learning: estimating
       uncertainty in dataset labels. JAIR 70.
    """

    #: what a model file may set (checked by nf.load; noisyfeedback._state)
    _learned_state: ClassVar[dict[str, Any]] = {
        "classes_": Array(("n_labels",), "label"),
        "confusion_": Array(("n_labels", "n_labels")),
        "condition_number_": Real(),
        "coef_": Array(("n_labels", "n_features_in_")),
        "intercept_": Array(("n_labels",)),
        "n_features_in_": Integer(1),
        "feature_names_in_": Array(("n_features_in_",), "str"),
        "n_iter_": Integer(0),
        "converged_": Flag(),
        "loss_": Real(),
        "C_": Interval(0, None, closed="neither"),
        "n_seen_": Interval(0, None),
        "cv_losses_": Array((None,)),
        "estimate_C_": Interval(0, None, closed="neither"),
        "accum_": Array((None,)),
        "label_issues_": Array((None,), "int64"),
        "pruned_confusion_": Array(("n_labels", "n_labels")),
    }
    #: diagnostics of some fits (Cs=, confusion="estimate", prune=True) and DataFrame column names
    _optional_state: ClassVar[Any] = frozenset({"feature_names_in_", "cv_losses_", "estimate_C_", "label_issues_",
                                                "pruned_confusion_"})
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "correction": Options(_CORRECTIONS),
        "C": Interval(0, None, closed="neither"),
        "fit_intercept": Options((True, False)),
        "max_iter": Integer(1),
        "tol": Interval(0, None, closed="left"),
        "estimator": Options(_ESTIMATORS),
        "n_folds": Integer(2),
        "proba_model": Options(_PROBA_MODELS),
        "refine": Integer(0),
        "max_condition": Interval(1, None, closed="left"),
        "learning_rate": Interval(0, None, closed="neither"),
        "Cs": OneOf((Options((None,)), _PositiveList())),
        "seed": AnySeed(),
        "prune": Options((True, False)),
    }
    _test_params: ClassVar[dict[str, Any]] = {"max_iter": 50}
    feedback_kind: ClassVar[str] = "label"
    _tags = Tags(family="label_noise", batch=True)  # what it is, for every front door (noisyfeedback.base.Tags)

    def __init__(
        self,
        confusion=None,
        correction: str = "forward",
        C: float = 1.0,
        fit_intercept: bool = True,
        max_iter: int = 500,
        tol: float = 1e-4,
        estimator: str = "confident_joint",
        n_folds: int = 5,
        proba_model: str = "linear",
        refine: int = 1,
        max_condition: float = DEFAULT_MAX_CONDITION,
        learning_rate: float = 0.5,
        Cs=None,
        seed=None,
        prune: bool = False,
    ):
        self.confusion = confusion
        self.correction = correction
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.estimator = estimator
        self.n_folds = n_folds
        self.proba_model = proba_model
        self.refine = refine
        self.max_condition = max_condition
        self.learning_rate = learning_rate
        self.Cs = Cs
        self.seed = seed
        self.prune = prune

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


    # -------------------------------------------------------- validation
    def _validate_params(self) -> None:
        super()._validate_params()
        if self.confusion is not None and not (isinstance(self.confusion, str) and self.confusion == "estimate"):
            if isinstance(self.confusion, str):
                raise ValueError(
                    "The 'confusion' parameter of CorrectedLogisticRegression must be a K x K matrix, "
                    f"'estimate' or None. Got {self.confusion!r} instead."
                )
            self._check_C(self.confusion)

    def _check_C(self, C, n_classes: int | None = None) -> np.ndarray:
        try:
            C = check_confusion_matrix(C, owner="CorrectedLogisticRegression",
                                       max_condition=float(self.max_condition))
        except (ValueError, TypeError) as exc:
            raise type(exc)(str(exc).replace("'C' parameter", "'confusion' parameter")) from None
        if n_classes is not None and C.shape[0] != n_classes:
            raise ValueError(
                f"The 'confusion' parameter of CorrectedLogisticRegression is {C.shape[0]} x {C.shape[0]}, "
                f"but there are {n_classes} classes: C[r, q] must refer to classes_[r] and classes_[q]."
            )
        return C

    def _validate_Xy(self, X, y, reset: bool):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=reset)
        check_classification_targets(y)
        return X, y

    def _encode(self, y) -> np.ndarray:
        idx = np.searchsorted(self.classes_, y)
        idx_c = np.clip(idx, 0, self.classes_.size - 1)
        bad = self.classes_[idx_c] != y
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"y has label {y[row]!r} in row {row}, which is not one of classes_ {self.classes_.tolist()!r}."
            )
        return idx_c.astype(np.int64)

    def _set_classes(self, y, classes=None) -> None:
        cls = np.unique(np.asarray(classes)) if classes is not None else np.unique(y)
        if cls.size < 2:
            raise ValueError(
                f"CorrectedLogisticRegression needs at least 2 classes; y holds {cls.size} class "
                f"({cls.tolist()!r})."
            )
        self.classes_ = cls

    def _set_confusion(self, X, yi, sw) -> None:
        K = self.classes_.size
        if self.confusion is None:
            C = np.eye(K)
        elif isinstance(self.confusion, str):
            C = self._estimate(X, yi, sw)
        else:
            C = self._check_C(self.confusion, K)
        self.confusion_ = C
        self.condition_number_ = float(np.linalg.cond(C))
        bad = not np.isfinite(self.condition_number_) or self.condition_number_ > float(self.max_condition)
        if bad and self.correction == "backward":
            raise ValueError(
                f"The confusion matrix of CorrectedLogisticRegression is singular or ill-conditioned: condition "
                f"number {self.condition_number_:.3g} exceeds {float(self.max_condition):.3g}."
            )

    def _folds(self, yi, K, offset: int):
        """Stratified folds (seeded by ``seed`` + offset), or None when a class has fewer than 2 rows."""
        from sklearn.model_selection import StratifiedKFold

        folds = int(min(self.n_folds, np.bincount(yi, minlength=K).min()))
        if folds < 2:
            return None
        rng = make_rng(self.seed)
        skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=int(rng.integers(2**31 - 1)) + offset)
        return list(skf.split(np.zeros(yi.size), yi))

    def _oof_proba(self, X, yi, sw, C, K, C_reg, splits) -> np.ndarray:
        """Out-of-fold softmax(Wx + b) of the model fitted (forward-corrected by C; C = I: plain) on the
        other folds."""
        proba = np.zeros((yi.size, K))
        for tr, te in splits:
            self._fit_encoded(X[tr], yi[tr], sw[tr], C, K, C_reg=C_reg, correction="forward",
                              tol=float(self.tol) * OOF_TOL_FACTOR)
            proba[te] = self._proba(X[te])
        return proba

    @staticmethod
    def _knn_oof_proba(X, yi, K, splits) -> np.ndarray:
        """Out-of-fold shares of each noisy label among the ``KNN_NEIGHBOURS`` nearest training rows of the
        other folds (features standardised on those rows; sparse X: scaled, not centred)."""
        import scipy.sparse as sp
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        proba = np.zeros((yi.size, K))
        for tr, te in splits:
            k = int(min(KNN_NEIGHBOURS, tr.size))
            model = make_pipeline(StandardScaler(with_mean=not sp.issparse(X)), KNeighborsClassifier(k))
            model.fit(X[tr], yi[tr])
            proba[np.ix_(te, model.classes_)] = model.predict_proba(X[te])
        return proba

    def _estimate(self, X, yi, sw) -> np.ndarray:
        """C from the noisy data alone: (1) the plain model's regularisation chosen on ``Cs`` by
        cross-validated log-loss of the noisy labels (else ``C``); (2) ``estimator`` on the out-of-fold
        noisy-class probabilities of ``proba_model`` (the plain model's or the k-nearest neighbours'); (3) with
        the linear model,
        ``refine`` EM (Dawid–Skene) steps: out-of-fold clean probabilities p_i of the model
        forward-corrected by the current Ĉ, posteriors of the true class q_i ∝ Ĉ[ỹ_i, :]·p_i, and
        Ĉ[r, q] = Σ_{ỹ_i = r} s_i q_i(q) / Σ_i s_i q_i(q)."""
        K = self.classes_.size
        splits = self._folds(yi, K, 0)
        if splits is None:
            return np.eye(K)
        eye = np.eye(K)
        if self.proba_model == "knn":
            return estimate_confusion(self._knn_oof_proba(X, yi, K, splits), yi, self.estimator)
        C_reg = float(self.C)
        if self.Cs is not None:
            C_reg, _ = self._select_C(X, yi, sw, K, eye)
        self.estimate_C_ = C_reg
        proba = self._oof_proba(X, yi, sw, eye, K, C_reg, splits)
        C = estimate_confusion(proba, yi, self.estimator)
        for _ in range(int(self.refine)):
            P = self._oof_proba(X, yi, sw, C, K, C_reg, splits)
            Q = C[yi] * P
            mass = Q.sum(axis=1, keepdims=True)
            Q = np.where(mass > 0, Q / np.where(mass > 0, mass, 1.0), P)
            N = np.zeros((K, K))
            np.add.at(N, yi, Q * sw[:, None])
            cs = N.sum(axis=0, keepdims=True)
            C = np.where(cs > 0, N / np.where(cs > 0, cs, 1.0), eye)
        return C

    # ---------------------------------------------------------------- fit
    def _select_C(self, X, yi, sw, K, confusion) -> tuple[float, np.ndarray | None]:
        """The candidate of ``Cs`` of least cross-validated forward-corrected log-loss of the NOISY labels
        (a proper score of C·p(x): needs no clean label), and the losses. Ascending Cs, warm-started."""
        Cs = sorted(float(c) for c in self.Cs)
        splits = self._folds(yi, K, 1)
        if splits is None or len(Cs) == 1:
            return (Cs[-1] if splits is None else Cs[0]), None
        with np.errstate(divide="ignore"):
            logC = np.log(confusion)
        losses = np.zeros(len(Cs))
        for tr, te in splits:
            theta = None
            for j, c in enumerate(Cs):
                self._fit_encoded(X[tr], yi[tr], sw[tr], confusion, K, theta0=theta, C_reg=c)
                theta = np.concatenate([self.coef_.ravel(), self.intercept_]) if self.fit_intercept \
                    else self.coef_.ravel().copy()
                Z = self._scores_raw(X[te])
                li = logsumexp(Z, axis=1) - logsumexp(Z + logC[yi[te]], axis=1)
                losses[j] += float(sw[te] @ li)
        losses /= float(sw.sum())
        return Cs[int(np.argmin(losses))], losses

    def _loss_args(self, yi, C, correction=None):
        correction = self.correction if correction is None else correction
        if correction == "backward":
            Cinv = np.linalg.inv(C)
            return None, np.ascontiguousarray(Cinv[:, yi].T)
        if correction == "forward" and not np.array_equal(C, np.eye(C.shape[0])):
            with np.errstate(divide="ignore"):
                logC = np.log(C)
            rows = logC[yi]
            if not np.isfinite(rows).any(axis=1).all():
                raise ValueError("A noisy label has probability 0 under the confusion matrix for every class.")
            return np.ascontiguousarray(rows), None
        return None, None

    def _fit_encoded(self, X, yi, sw, C, K, theta0=None, C_reg=None, correction=None, tol=None) -> None:
        """L-BFGS on the corrected objective. With an intercept the features are centred implicitly
        (scores W(x − μ) + b', μ the weighted mean of X, b' = b + Wμ): the same objective and
        minimiser in better-conditioned variables; ``theta0`` and the result are in (W, b)."""
        d = X.shape[1]
        C_reg = float(self.C) if C_reg is None else float(C_reg)
        logC_rows, A_rows = self._loss_args(yi, C, correction)
        size = K * d + (K if self.fit_intercept else 0)
        mu = None
        if self.fit_intercept:
            mu = np.asarray(X.T @ sw).ravel() / float(sw.sum())
        x0 = np.zeros(size) if theta0 is None else np.array(theta0, dtype=np.float64)
        if mu is not None and theta0 is not None:
            x0[K * d:] += x0[: K * d].reshape(K, d) @ mu
        # one BLAS thread: the products are small (n x d by d x K), where a second thread costs more than it
        # gives (8x slower on a busy 2-core machine), and the fit's bits no longer depend on the core count
        with threadpool_limits(limits=1, user_api="blas"):
            res = minimize(corrected_loss_grad, x0, jac=True, method="L-BFGS-B",
                           args=(X, yi, K, logC_rows, A_rows, sw, C_reg, bool(self.fit_intercept), mu),
                           options={"maxiter": int(self.max_iter), "gtol": float(self.tol if tol is None else tol),
                                    "ftol": 1e-12})
        theta = res.x.copy()
        if mu is not None:
            theta[K * d:] -= theta[: K * d].reshape(K, d) @ mu
        self._set_theta(theta, K, d)
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(res.success)
        self.loss_ = float(res.fun)

    def _set_theta(self, theta, K, d) -> None:
        self.coef_ = theta[: K * d].reshape(K, d).copy()
        self.intercept_ = theta[K * d:].copy() if self.fit_intercept else np.zeros(K)

    def fit(self, X, y, sample_weight=None) -> "CorrectedLogisticRegression":
        """Fit on X (n, d), dense or CSR, and noisy labels y; returns self."""
        self._validate_params()
        for name in self._learned_attributes():
            delattr(self, name)
        X, y = self._validate_Xy(X, y, reset=True)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        self._set_classes(y)
        yi = self._encode(y)
        K = self.classes_.size
        self._set_confusion(X, yi, sw)
        if self.Cs is not None:
            self.C_, losses = self._select_C(X, yi, sw, K, self.confusion_)
            if losses is not None:
                self.cv_losses_ = losses
        else:
            self.C_ = float(self.C)
        if self.prune:
            self._fit_pruned(X, yi, sw, K)
        else:
            self._fit_encoded(X, yi, sw, self.confusion_, K, C_reg=self.C_)
        self.n_seen_ = float(sw.sum())
        self.accum_ = np.zeros(self.coef_.size + K)  # partial_fit after fit: AdaGrad's sums start at 0
        return self

    def _fit_pruned(self, X, yi, sw, K) -> None:
        """``prune=True``: flag (out-of-fold scores, the expected number of flips), refit on the rest
        forward-corrected by their residual confusion."""
        from ...noise.label_issues import _flag, em_step, flip_posterior

        C = self.confusion_
        splits = self._folds(yi, K, 2)
        if splits is None:  # a class with one row: nothing can be judged out of fold
            flagged = np.zeros(0, dtype=np.int64)
            C_kept = C
        else:
            P = self._oof_proba(X, yi, sw, C, K, self.C_, splits)
            flagged = _flag(flip_posterior(P, yi, C), yi, C, "expected_flips", 0.5).astype(np.int64)
            kept = np.ones(yi.size, dtype=bool)
            kept[flagged] = False
            if np.bincount(yi[kept], minlength=K).min() == 0:  # never prune a class away
                for r in np.flatnonzero(np.bincount(yi[kept], minlength=K) == 0):
                    kept[flagged[yi[flagged] == r]] = True
                flagged = flagged[~kept[flagged]]
            C_kept = em_step(C, P[kept], yi[kept], sw[kept])
            X, yi, sw = X[kept], yi[kept], sw[kept]
        self.label_issues_ = flagged
        self.pruned_confusion_ = C_kept
        self._fit_encoded(X, yi, sw, C_kept, K, C_reg=self.C_)

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> "CorrectedLogisticRegression":
        """One pass of AdaGrad over this chunk on the same corrected objective (streams).

        ``classes`` is needed on the first call (all labels that will occur). With
        ``confusion="estimate"`` C is estimated on the first chunk."""
        first = not hasattr(self, "coef_")
        if first:
            self._validate_params()
            X, y = self._validate_Xy(X, y, reset=True)
            if classes is None:
                raise ValueError("CorrectedLogisticRegression.partial_fit needs classes= on its first call.")
            self._set_classes(y, classes)
        else:
            X, y = self._validate_Xy(X, y, reset=False)
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        yi = self._encode(y)
        K, d = self.classes_.size, X.shape[1]
        if first:
            self._set_confusion(X, yi, sw)
            for name in ("converged_", "loss_"):  # left by the batch fits of confusion="estimate"
                self.__dict__.pop(name, None)
            self.coef_ = np.zeros((K, d))
            self.intercept_ = np.zeros(K)
            self.accum_ = np.zeros(K * d + K)
            self.n_seen_ = 0.0
            self.n_iter_ = 0
        if not hasattr(self, "accum_"):
            self.accum_ = np.zeros(K * d + K)
        logC_rows, A_rows = self._loss_args(yi, self.confusion_)
        batch = 64
        for s in range(0, X.shape[0], batch):
            e = min(s + batch, X.shape[0])
            n_seen = self.n_seen_ + float(sw[s:e].sum())
            theta = np.concatenate([self.coef_.ravel(), self.intercept_])
            with np.errstate(over="ignore", invalid="ignore"):
                _, g = corrected_loss_grad(
                    theta, X[s:e], yi[s:e], K, None if logC_rows is None else logC_rows[s:e],
                    None if A_rows is None else A_rows[s:e], sw[s:e],
                    float(self.C) * max(n_seen, 1.0) / max(float(sw[s:e].sum()), 1e-12), True)
                if not self.fit_intercept:
                    g[K * d:] = 0.0
                accum = self.accum_ + g * g
                theta = theta - float(self.learning_rate) * g / (np.sqrt(accum) + 1e-8)
            if not (np.isfinite(theta).all() and np.isfinite(accum).all()):
                raise ValueError(f"CorrectedLogisticRegression.partial_fit: rows {s}..{e - 1} would make the weights "
                                 "non-finite (lower learning_rate or rescale X); the state is as before those rows.")
            self.n_seen_ = n_seen
            self.accum_ = accum
            self._set_theta(theta, K, d)
            self.n_iter_ += 1
        return self

    # ------------------------------------------------------------ inference
    def _scores_raw(self, X) -> np.ndarray:
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def _proba(self, X) -> np.ndarray:
        return softmax(self._scores_raw(X), axis=1)

    def decision_function(self, X) -> np.ndarray:
        """Scores W x + b, shape (n, K); for K = 2 the binary convention s_1 − s_0, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        S = self._scores_raw(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict_proba(self, X) -> np.ndarray:
        """The CLEAN class probabilities softmax(W x + b), shape (n, K)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._proba(X)

    def predict_log_proba(self, X) -> np.ndarray:
        return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax_k (W x + b)_k]``."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.classes_[np.argmax(self._scores_raw(X), axis=1)]
