"""Quality of the catalogue learners on candidate streams, with seeds and standard errors.

``churn``: the synthetic ranking stream (items arriving and retiring, about half of the candidates younger
than 200 rounds), one slot, flips (0, 0) and (0.2, 0.3): mean clean regret per round of
``CatalogueSquareCB`` (default parameters) and of the index ``SquareCB`` that cannot use item features
(its actions are the 10 positions of the candidate list, its features the context only).

``multiclass``: a multiclass set converted to candidate lists of 5 to K classes (the label in the list
with probability 0.9), flips (0.2, 0.4): online error of the greedy choice (a round whose best
candidate is the label counts an error when the greedy candidate is not it; rounds without the label
count none).

``slots``: three positions examined with probabilities (1, 0.6, 0.35): clean expected clicks per page,
and the item scores' mean per-round Spearman correlation with the true click probabilities over the last
10 % of rounds, examination estimated vs ignored.

    nice -n 10 python benchmarks/catalogue_quality.py churn --rounds 200000 --seeds 3
    nice -n 10 python benchmarks/catalogue_quality.py multiclass --dataset letter --data-dir DATA
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402


def mean_se(xs) -> str:
    xs = np.asarray(xs, dtype=float)
    se = xs.std(ddof=1) / np.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return f"{xs.mean():.4f} ± {se:.4f}"


def index_regret(stream, rounds: int, flips, seed: int) -> float:
    """Index SquareCB over the candidate positions (context features only): mean clean regret a round."""
    r = stream.rounds
    n = r.n_rounds
    K = int(r.sizes.max())
    if not (r.sizes == K).all():
        raise ValueError("the index baseline needs the same number of candidates every round")
    R = stream.rewards.reshape(n, K)
    learner = nf.SquareCB(K, seed=seed)
    rng = np.random.default_rng(seed + 1000)
    X = r.context
    regret = 0.0
    chunk = 1000
    for lo in range(0, rounds, chunk):
        idx = np.arange(lo, min(lo + chunk, rounds)) % n
        a, p = learner.act(X[idx])
        clean = rng.random(idx.shape[0]) < R[idx, a]
        u = rng.random(idx.shape[0])
        f = np.where(clean, u >= flips[1], u < flips[0]).astype(np.int64)
        learner.learn(X[idx], a, f, p)
        regret += float((R[idx].max(axis=1) - R[idx, a]).sum())
    return regret / rounds


def churn(args) -> None:
    print(f"churn: ranking stream, {args.rounds} rounds, seeds 0..{args.seeds - 1}")
    for flips in ((0.0, 0.0), (0.2, 0.3)):
        cat, idx = [], []
        for s in range(args.seeds):
            stream = nf.datasets.ranking_stream(n_rounds=min(args.rounds, args.stream_rounds), seed=s,
                                                examination=None)
            tr = nf.simulate(nf.CatalogueSquareCB(seed=s), stream, None, nf.feedback.NoisyBandit(*flips),
                             n_rounds=args.rounds, seed=s)
            cat.append(tr.metrics["regret_rate"])
            idx.append(index_regret(stream, args.rounds, flips, s))
        print(f"  flips {flips}: CatalogueSquareCB regret {mean_se(cat)}; index SquareCB (positions) "
              f"{mean_se(idx)}; ratio {np.mean(cat) / np.mean(idx):.3f}", flush=True)


def multiclass(args) -> None:
    X, y = nf.datasets.load(args.dataset, split="train", data_dir=args.data_dir)
    K = int(y.max()) + 1
    print(f"multiclass: {args.dataset} ({X.shape[0]} rows, K={K}), {args.rounds} rounds, 5..K candidates, "
          "label kept with probability 0.9, flips (0.2, 0.4)")
    errs = []
    for s in range(args.seeds):
        perm = np.random.default_rng(s).permutation(X.shape[0])
        stream = nf.datasets.multiclass_candidates(X[perm], y[perm], n_classes=K, k_min=min(5, K), p_label=0.9,
                                                   seed=s)
        tr = nf.simulate(nf.CatalogueSquareCB(seed=s), stream, None, nf.feedback.NoisyBandit(0.2, 0.4),
                         n_rounds=args.rounds, seed=s)
        errs.append(tr.error_rate)
    print(f"  CatalogueSquareCB online error {mean_se(errs)}", flush=True)


def slots(args) -> None:
    from scipy.stats import spearmanr

    print(f"slots: ranking stream with examination (1, 0.6, 0.35), {args.rounds} rounds, 3 slots")
    for label, exam in (("estimated", None), ("ignored", (1.0, 1.0, 1.0))):
        clicks, rhos = [], []
        for s in range(args.seeds):
            n = min(args.rounds, args.stream_rounds)
            stream = nf.datasets.ranking_stream(n_rounds=n, seed=s, examination=(1.0, 0.6, 0.35))
            L = nf.CatalogueSquareCB(n_slots=3, examination=exam, seed=s)
            tr = nf.simulate(L, stream, None, nf.feedback.NoisyBandit(0.0, 0.0), n_rounds=args.rounds, seed=s)
            last = stream.take(np.arange(int(0.9 * n), n))
            v = L.decision_function(last.rounds)
            rhos.append(np.mean([spearmanr(v[last.rounds.candidates(i)], last.rewards[last.rounds.candidates(i)])[0]
                                 for i in range(last.n_rounds)]))
            clicks.append(tr.metrics["clicks_rate"])
        print(f"  examination {label}: clean clicks/page {mean_se(clicks)}; Spearman (last 10 %) {mean_se(rhos)}",
              flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("churn", "multiclass", "slots"))
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--stream-rounds", type=int, default=200_000, help="rounds of a generated stream (cycled)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--dataset", default="letter")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    {"churn": churn, "multiclass": multiclass, "slots": slots}[args.what](args)


if __name__ == "__main__":
    main()
