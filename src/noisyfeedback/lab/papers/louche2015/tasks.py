"""louche2015's task kinds (pure functions of a task): the toy runs of Figure 1, the sample-size panel,
Figure 5 on the toy data, and Table 1's realistic protocol (with Figure 5's curves) for one run."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ...engine import task_kind

#: base entropy of every seed of this recipe (SeedSequence([BASE_SEED, part, run, ...]))
BASE_SEED = 2015

STRATEGIES = ("error", "confusion", "random")


def _seed(*keys: int) -> int:
    """A 32-bit seed derived from (BASE_SEED, *keys) by SeedSequence."""
    return int(np.random.SeedSequence([BASE_SEED, *[int(k) for k in keys]]).generate_state(1)[0])


def _metrics(y_true, y_pred, K: int) -> dict[str, float]:
    from ....metrics import confusion_rate, error_rate

    return {"error": float(error_rate(y_true, y_pred)), "confusion_rate": float(confusion_rate(y_true, y_pred, K))}


def _offdiag_norm(C: np.ndarray) -> float:
    """‖C − diag(C)‖_F, the paper's noise level (Figure 1(a)'s x-axis)."""
    return float(np.linalg.norm(C - np.diag(np.diag(C))))


# ---------------------------------------------------------------- toy data
def _toy_split(plan: dict, run: int, n_train: int | None = None):
    from ....datasets.uma_toy import uma_toy

    t = plan["toy"]
    n_tr = int(t["n_train"] if n_train is None else n_train)
    X, y = uma_toy(n_tr + int(t["n_test"]), n_classes=t["n_classes"], n_features=t["n_features"],
                   margin=t["margin"], seed=_seed(1, run, n_tr))
    return X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:]


def toy_task(plan: dict, run: int) -> list[dict]:
    """Figures 1(a) and 1(b) for one run: one toy data set, one reference matrix R (seeded by the run)."""
    from ....feedback import ConfusionNoise
    from ....learners.label_noise.uma import UMA
    from ....noise.confusion import random_confusion

    K, T = int(plan["toy"]["n_classes"]), int(plan["max_iter"])
    Xtr, ytr, Xte, yte = _toy_split(plan, run)
    r_seed = _seed(2, run)
    rows = []
    for i, lam in enumerate(plan["lams"]):
        C = random_confusion(K, lam, seed=r_seed)
        y_noisy = ConfusionNoise(C).respond(ytr, rng=np.random.default_rng(_seed(3, run, i)))
        base = {"part": "fig1a", "run": run, "lam": float(lam), "noise_level": _offdiag_norm(C),
                "cond": float(np.linalg.cond(C)), "label_noise": float(np.mean(y_noisy != ytr)),
                "n_train": len(ytr)}
        for learner, conf in (("UMA", C), ("Perceptron", None)):
            m = UMA(confusion=conf, max_iter=T).fit(Xtr, y_noisy)
            rows.append({**base, "learner": learner, **_metrics(yte, m.predict(Xte), K)})
    lam_true = float(plan["fig1b_lam"])
    C_true = random_confusion(K, lam_true, seed=r_seed)
    y_noisy = ConfusionNoise(C_true).respond(ytr, rng=np.random.default_rng(_seed(4, run)))
    for alpha in plan["alphas"]:
        lam_fed = lam_true * (1.0 - float(alpha))
        C_fed = random_confusion(K, lam_fed, seed=r_seed)
        m = UMA(confusion=C_fed, max_iter=T).fit(Xtr, y_noisy)
        rows.append({"part": "fig1b", "run": run, "lam": lam_true, "alpha": float(alpha), "lam_fed": lam_fed,
                     "noise_level": _offdiag_norm(C_true), "cond": float(np.linalg.cond(C_fed)),
                     "n_train": len(ytr), "learner": "UMA", **_metrics(yte, m.predict(Xte), K)})
    return rows


def sample_size_task(plan: dict, lam: float, n_train: int, run: int) -> list[dict]:
    """UMA and the Perceptron at noise level λ with ``n_train`` training points (our sample-size panel)."""
    from ....feedback import ConfusionNoise
    from ....learners.label_noise.uma import UMA
    from ....noise.confusion import random_confusion

    K, T = int(plan["toy"]["n_classes"]), int(plan["max_iter"])
    Xtr, ytr, Xte, yte = _toy_split(plan, run, n_train)
    C = random_confusion(K, lam, seed=_seed(2, run))
    y_noisy = ConfusionNoise(C).respond(ytr, rng=np.random.default_rng(_seed(5, run, n_train)))
    rows = []
    for learner, conf in (("UMA", C), ("Perceptron", None)):
        m = UMA(confusion=conf, max_iter=T).fit(Xtr, y_noisy)
        rows.append({"part": "sample_size", "run": run, "lam": float(lam), "noise_level": _offdiag_norm(C),
                     "n_train": int(n_train), "learner": learner, **_metrics(yte, m.predict(Xte), K)})
    return rows


def strategy_curves(X, y_noisy, X_test, y_test, K: int, confusion, max_iter: int, every: int,
                    seed: int) -> list[dict]:
    """Figure 5: test error and confusion rate every ``every`` iterations, one curve per strategy.

    Each ``partial_fit`` on the whole set is one batch UMA iteration (the same step as ``fit``).
    """
    from ....learners.label_noise.uma import UMA

    rows = []
    for strategy in STRATEGIES:
        m = UMA(confusion=confusion, strategy=strategy, seed=seed)
        its, err, cr = [], [], []
        for t in range(1, int(max_iter) + 1):
            m.partial_fit(X, y_noisy)
            if t == 1 or t % every == 0 or t == max_iter:
                met = _metrics(y_test, m.predict(X_test), K)
                its.append(t)
                err.append(met["error"])
                cr.append(met["confusion_rate"])
        rows.append({"strategy": strategy, "iterations": its, "error_curve": err, "cr_curve": cr,
                     "error": err[-1], "confusion_rate": cr[-1]})
    return rows


def fig5_toy_task(plan: dict, run: int) -> list[dict]:
    """Figure 5 on the toy data with class-conditional noise C(λ) (UMA's assumptions hold)."""
    from ....feedback import ConfusionNoise
    from ....noise.confusion import random_confusion

    K, T = int(plan["toy"]["n_classes"]), int(plan["max_iter"])
    Xtr, ytr, Xte, yte = _toy_split(plan, run)
    lam = float(plan["fig5_toy_lam"])
    C = random_confusion(K, lam, seed=_seed(2, run))
    y_noisy = ConfusionNoise(C).respond(ytr, rng=np.random.default_rng(_seed(6, run)))
    rows = strategy_curves(Xtr, y_noisy, Xte, yte, K, C, T, int(plan["fig5_every"]), _seed(7, run))
    label = f"toy, C(λ = {lam:g})"
    return [{"part": "fig5", "dataset": label, "run": run, **r} for r in rows]


# ---------------------------------------------------------------- real data
def _real_split(ds: dict, run: int, data_dir):
    """(X_train, y_train, X_test, y_test), features scaled by the training maximum."""
    from sklearn.model_selection import train_test_split

    import noisyfeedback as nf

    if ds.get("n_train") is None:
        Xtr, ytr = nf.datasets.load(ds["name"], split="train", data_dir=data_dir)
        Xte, yte = nf.datasets.load(ds["name"], split="test", data_dir=data_dir)
    else:
        X, y = nf.datasets.load(ds["name"], data_dir=data_dir)
        Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=int(ds["n_train"]), stratify=y,
                                              random_state=_seed(10, run))
    scale = float(np.abs(Xtr).max()) or 1.0
    return Xtr / scale, ytr, Xte / scale, yte


def _kpca(ds: dict, Xtr: np.ndarray, Xte: np.ndarray, run: int):
    """Gaussian kernel PCA (the paper's Section 3.6), fitted on at most ``kpca_fit`` training points;
    kernel width by the median heuristic (γ = 1 / median squared distance)."""
    from sklearn.decomposition import KernelPCA

    rng = np.random.default_rng(_seed(11, run))
    n_fit = min(int(ds["kpca_fit"]), Xtr.shape[0])
    fit_rows = np.sort(rng.choice(Xtr.shape[0], n_fit, replace=False))
    P = Xtr[fit_rows[:500]]
    d2 = np.maximum(np.einsum("ij,ij->i", P, P)[:, None] + np.einsum("ij,ij->i", P, P)[None, :] - 2 * P @ P.T, 0)
    gamma = 1.0 / float(np.median(d2[np.triu_indices_from(d2, k=1)]))
    kp = KernelPCA(n_components=int(ds["n_components"]), kernel="rbf", gamma=gamma,
                   eigen_solver="randomized", random_state=_seed(12, run)).fit(Xtr[fit_rows])
    return kp.transform(Xtr), kp.transform(Xte), gamma


def _label_spreading(X, y_partial, X_test):
    from sklearn.semi_supervised import LabelSpreading

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isolated k-NN components divide 0 by 0 (sklearn warns)
        return LabelSpreading(kernel="knn", n_neighbors=7).fit(X, y_partial).predict(X_test)


def table1_task(ds: dict, plan: dict, run: int, data_dir, with_curves: bool, recommend: bool = False) -> list[dict]:
    """Table 1's realistic protocol (paper's Section 4.2.1) for one run; Figure 5 curves if asked; with
    ``recommend``, also ours and the peers on the same pseudo-labels (rows of part "recommend_table1")."""
    from ....feedback import ConfusionNoise
    from ....learners.label_noise.rough import pseudo_label
    from ....learners.label_noise.uma import UMA
    from ....noise.confusion import confusion_counts

    T = int(plan["max_iter"])
    t0 = time.perf_counter()
    Xtr_raw, ytr, Xte_raw, yte = _real_split(ds, run, data_dir)
    K = int(max(ytr.max(), yte.max())) + 1
    Ftr, Fte, gamma = _kpca(ds, Xtr_raw, Xte_raw, run)
    rng = np.random.default_rng(_seed(13, run))
    # 1. n_l examples per class (S_l); the rest of the training set is S_u
    lab = np.sort(np.concatenate([rng.choice(np.flatnonzero(ytr == k), int(ds["n_labelled"]), replace=False)
                                  for k in range(K)]))
    unl = np.setdiff1d(np.arange(ytr.shape[0]), lab)
    # 2.–4. rough classifier on S_l, its confusion by cross-validation on S_l, pseudo-labels for S_u
    y_noisy, C_hat, rough = pseudo_label(Ftr[lab], ytr[lab], Ftr[unl], classifier=UMA(max_iter=T),
                                         seed=_seed(14, run), n_classes=K)
    actual = confusion_counts(ytr[unl], y_noisy, K)
    with np.errstate(invalid="ignore", divide="ignore"):
        actual = actual / actual.sum(axis=0, keepdims=True)
    base = {"part": "table1", "dataset": ds["label"], "run": run, "K": K, "n_labelled": len(lab),
            "n_unlabelled": len(unl), "n_test": len(yte), "kpca_gamma": gamma,
            "pseudo_label_noise": float(np.mean(y_noisy != ytr[unl])), "cond_C_hat": float(np.linalg.cond(C_hat)),
            "C_hat_vs_actual": float(np.nanmax(np.abs(C_hat - actual)))}
    rows = []

    def add(learner: str, pred=None, note: str = ""):
        met = _metrics(yte, pred, K) if pred is not None else {"error": np.nan, "confusion_rate": np.nan}
        rows.append({**base, "learner": learner, "note": note, **met})

    def uma(conf, X, y):
        try:
            return UMA(confusion=conf, max_iter=T).fit(X, y).predict(Fte), ""
        except ValueError as exc:  # a singular / ill-conditioned estimate is rejected with its condition number
            return None, str(exc)

    add("UMA", *uma(C_hat, Ftr[unl], y_noisy))
    add("P_noisy", *uma(None, Ftr[unl], y_noisy))
    add("P_labelled", rough.predict(Fte))  # the rough classifier h₀ is the Perceptron on S_l
    add("P_full", *uma(None, Ftr, ytr))
    y_partial = np.full(ytr.shape[0], -1, dtype=np.int64)
    y_partial[lab] = ytr[lab]
    add("SSL", _label_spreading(Ftr, y_partial, Fte))
    add("SSL_raw", _label_spreading(Xtr_raw, y_partial, Xte_raw))
    if np.isfinite(actual).all():
        add("UMA_actual_C", *uma(actual, Ftr[unl], y_noisy))
    else:
        add("UMA_actual_C", None, "a class is absent from S_u")
    y_cc = ConfusionNoise(C_hat).respond(ytr[unl], rng=np.random.default_rng(_seed(15, run)))
    add("UMA_cc", *uma(C_hat, Ftr[unl], y_cc))
    add("P_cc", *uma(None, Ftr[unl], y_cc))
    for r in rows:
        r["seconds"] = time.perf_counter() - t0
    if recommend:  # ours and the peers on the same pseudo-labels and Ĉ, after the paper's timing
        mk = {"part": "recommend_table1", "dataset": ds["label"], "run": run,
              "pseudo_label_noise": base["pseudo_label_noise"]}
        ours = recommend_fits(Ftr[unl], y_noisy, Fte, yte, K, C_hat, _seed(21, run),
                              estimate=bool(plan.get("recommend_estimate", True)))
    if with_curves:
        try:
            curves = strategy_curves(Ftr[unl], y_noisy, Fte, yte, K, C_hat, T, int(plan["fig5_every"]),
                                     _seed(16, run))
            rows += [{"part": "fig5", "dataset": f"{ds['label']}, pseudo-labels", "run": run, **c} for c in curves]
        except ValueError:
            pass  # Ĉ rejected: Table 1 says so
    if recommend:
        rows += [{**mk, **r} for r in ours]
    return rows


# ------------------------------------------------ what we recommend instead
def recommend_fits(Xtr, y_noisy, Xte, yte, K: int, C, seed: int, estimate: bool = True) -> list[dict]:
    """Ours (CorrectedLogisticRegression with C, and with C estimated) and the peers (logistic regression on
    the noisy labels; cleanlab's CleanLearning where installed) on standardised features, fitted on the
    same noisy labels as the paper's learners: one row each with the test metrics (``note`` says why a fit
    was refused). UMA is not refitted here: the paper's own UMA of the same run is the comparison."""
    from sklearn.preprocessing import StandardScaler

    from ...recommend_supervised import label_noise_plan

    sc = StandardScaler().fit(Xtr)
    Ztr, Zte = sc.transform(Xtr), sc.transform(Xte)
    rows = []
    for name, make in label_noise_plan(np.asarray(C, dtype=float), seed=seed).items():
        if name == "UMA" or (not estimate and "estimated C" in name):
            continue
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence warnings of the peers
                pred = make().fit(Ztr, y_noisy).predict(Zte)
            met, note = _metrics(yte, np.asarray(pred), K), ""
        except (ValueError, np.linalg.LinAlgError) as exc:  # e.g. an estimated C refused as not invertible
            met, note = {"error": np.nan, "confusion_rate": np.nan}, str(exc)[:200]
        rows.append({"learner": name, "note": note, "fit_seconds": time.perf_counter() - t0, **met})
    return rows


def recommend_toy_task(plan: dict, run: int) -> list[dict]:
    """Figure 1(a)'s toy runs at the λ of ``plan["recommend_lams"]``: the same split, the same C(λ) and the
    same noisy labels as the paper's UMA and Perceptron of that run."""
    from ....feedback import ConfusionNoise
    from ....noise.confusion import random_confusion

    K = int(plan["toy"]["n_classes"])
    Xtr, ytr, Xte, yte = _toy_split(plan, run)
    r_seed = _seed(2, run)
    rows = []
    for i, lam in enumerate(plan["lams"]):
        if not any(np.isclose(float(lam), float(v)) for v in plan.get("recommend_lams", plan["lams"])):
            continue
        C = random_confusion(K, lam, seed=r_seed)
        y_noisy = ConfusionNoise(C).respond(ytr, rng=np.random.default_rng(_seed(3, run, i)))  # the paper's labels
        base = {"part": "recommend_toy", "run": run, "lam": float(lam), "noise_level": _offdiag_norm(C),
                "label_noise": float(np.mean(y_noisy != ytr))}
        for r in recommend_fits(Xtr, y_noisy, Xte, yte, K, C, _seed(20, run, i),
                                estimate=bool(plan.get("recommend_estimate", True))):
            rows.append({**base, **r})
    return rows


# ---------------------------------------------------------------- running
@task_kind("louche2015.toy")
def _toy_kind(task: dict) -> list[dict]:
    return toy_task(task["plan"], task["run"])


@task_kind("louche2015.sample_size")
def _sample_size_kind(task: dict) -> list[dict]:
    return sample_size_task(task["plan"], task["lam"], task["n_train"], task["run"])


@task_kind("louche2015.fig5_toy")
def _fig5_toy_kind(task: dict) -> list[dict]:
    return fig5_toy_task(task["plan"], task["run"])


@task_kind("louche2015.table1")
def _table1_kind(task: dict) -> list[dict]:
    return table1_task(task["dataset"], task["plan"], task["run"], task.get("_data_dir"), task["with_curves"],
                       bool(task.get("recommend", False)))


@task_kind("louche2015.recommend_toy")
def _recommend_toy_kind(task: dict) -> list[dict]:
    return recommend_toy_task(task["plan"], task["run"])
