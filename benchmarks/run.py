"""Speed against the peers (``make bench``): writes benchmarks/results/make-bench.md and prints it.

The workloads are declared in :data:`WORKLOADS` and :data:`SWEEP`; every one runs ours and
the peer on identical data in this one process run. Ours is timed by ``nf.simulate`` after a
JIT warm-up on the same argument types (compilation is never counted; converting a mostly-zero
dense X to CSR is, see ``noisyfeedback/_rows.py``). Peers missing from the environment (the
``bench`` extra: ``vowpalwabbit``, ``river``) are reported as missing.

Data: MNIST from ``--data-dir`` when present, else an MNIST-shaped synthetic stream; sparse
workloads use a generated RCV1-like stream (see :func:`rcv1_like`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

# before numpy is imported: OpenBLAS reads it once, when it loads (set after the import it did nothing, and
# CorrectedLogisticRegression.fit's matmuls ran on 2 spinning BLAS threads on this shared 2-core machine: 5x
# the CPU time)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402

import noisyfeedback as nf  # noqa: E402

#: bandit multiclass on the MNIST-shaped dense stream: ours vs VW --cbify (same rows, same γ)
BANDIT = [
    {"learner": "RCNBF", "params": {"gamma": 0.05, "rho0": 0.2, "rho1": 0.4}, "channel": (0.2, 0.4)},
    {"learner": "Banditron", "params": {"gamma": 0.05}, "channel": (0.0, 0.0)},
    {"learner": "SquareCB", "params": {}, "channel": (0.2, 0.4)},  # target: ≥ 1M rounds/s, defaults
]
#: the RCV1-like sparse streams: (n rows, d features, non-zeros per row)
SPARSE = [(100_000, 50_000, 50), (100_000, 50_000, 200), (100_000, 500_000, 50)]
#: seeds of the noisy-bandit figure (the sweep target is stated for all of them)
FIGURE_SEEDS = 10
#: the noisy-bandit figure (Agarwal & Manwani, Figure 2) at full size, γ fixed (no tuning)
SWEEP = {
    "settings": [(0.0, 0.0), (0.15, 0.15), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2)],
    # RCINE as in `reproduce agarwal2021` (N_s = 50 000 every 200 000 rounds), with warm_start: each estimate
    # after the first reuses the first's SVD basis and ranker penalty (about 1/3 of a cold estimate's cost)
    "learners": {"RCNBF": {"gamma": 0.05},
                 "RCINE": {"gamma": 0.05, "n_s": 50_000, "estimate_every": 200_000, "warm_start": True},
                 "Banditron": {"gamma": 0.05}, "BPA": {"gamma": 0.05}, "SOBA": {"gamma": 0.05, "diagonal": True}},
    "n_rounds": 1_000_000,
}


def mnist_shaped(n: int = 60_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    protos = (rng.random((10, 784)) < 0.19) * rng.random((10, 784))
    y = rng.integers(0, 10, size=n)
    X = protos[y] * (rng.random((n, 784)) < 0.9)
    X += (rng.random((n, 784)) < 0.02) * rng.random((n, 784))
    return np.clip(X, 0, 1), y.astype(np.int64)


def load_stream(data_dir: str | None):
    if data_dir:
        try:
            X, y = nf.datasets.load("mnist", split="train", data_dir=data_dir)
            return X, y, "MNIST train 60000×784 dense float64"
        except (FileNotFoundError, AttributeError, ValueError) as exc:
            print(f"MNIST not loaded ({exc}); using an MNIST-shaped synthetic stream", file=sys.stderr)
    X, y = mnist_shaped()
    return X, y, "MNIST-shaped synthetic 60000×784 dense float64 (19 % non-zero)"


def rcv1_like(n: int, d: int, nnz: int, n_classes: int = 10, seed: int = 0):
    """CSR rows with about ``nnz`` non-zeros each (Zipf-like feature popularity, positive tf-idf-like
    values, unit L2 norm); labels from a planted sparse linear model, so the stream is learnable.

    Each row draws ``nnz`` features from the popularity law and keeps the distinct ones, so a row has
    slightly fewer than ``nnz`` non-zeros; the table reports the mean.
    """
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, d + 1) ** 0.6)
    cdf /= cdf[-1]
    idx = np.sort(np.minimum(np.searchsorted(cdf, rng.random((n, nnz))), d - 1), axis=1)
    keep = np.ones_like(idx, dtype=bool)
    keep[:, 1:] = idx[:, 1:] != idx[:, :-1]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    indices = idx[keep].astype(np.int64)
    data = rng.exponential(size=indices.size)
    norms = np.sqrt(np.add.reduceat(data ** 2, indptr[:-1]))
    data /= np.repeat(norms, np.diff(indptr))
    X = sp.csr_matrix((n, d))
    X.data, X.indices, X.indptr = data, indices, indptr
    W = sp.random(n_classes, d, density=0.05, random_state=rng, data_rvs=rng.standard_normal).tocsr()
    y = np.asarray((X @ W.T).toarray().argmax(axis=1)).ravel().astype(np.int64)
    return X, y


def time_ours(make, X, y, channel, n_rounds: int, repeats: int = 3):
    """Best of ``repeats`` runs of ``nf.simulate`` (seeds 0..), after a warm-up on the same types."""
    k = min(2_000, X.shape[0])
    nf.simulate(make(), X[:k], y[:k], channel, n_rounds=4 * k, seed=0)  # compile (or load from the disk cache)
    best = None
    for r in range(repeats):
        t = nf.simulate(make(), X, y, channel, n_rounds=n_rounds, seed=r)
        if best is None or t.wall_time < best.wall_time:
            best = t
    return best


def _rate(x: float) -> str:
    return f"{x / 1e3:,.0f}k/s" if x >= 1e3 else f"{x:,.0f}/s"


def bandit_rows(X, y, rounds: int, vw_rounds: int, workdir: Path) -> list[dict]:
    rows = []
    K = int(y.max()) + 1
    for spec in BANDIT:
        cls = getattr(nf, spec["learner"])
        make = lambda cls=cls, p=spec["params"]: cls(K, seed=0, **p)  # noqa: E731
        channel = nf.feedback.NoisyBandit(*spec["channel"])
        t = time_ours(make, X, y, channel, rounds)
        rows.append({"workload": f"bandit, {spec['learner']} {channel!r}", "ours": t.rounds_per_second,
                     "ours_err": t.error_rate, "detail": f"{t.n_rounds:,} rounds in {t.wall_time:.2f} s"})
    from noisyfeedback.simulate import round_order

    order = round_order(X.shape[0], vw_rounds, np.random.default_rng(0))
    vw = peers.vw_cbify(X, y, order, K, 0.05, workdir)
    for r in rows:
        if vw is None:
            r.update(peer="VW not installed")
        else:
            fast = "cache" if vw["cache"] >= vw["text"] else "text"  # the ratio is against VW's faster mode
            r.update(peer=f"VW --cbify {K} ({fast})", peer_rate=vw[fast], peer_err=vw["loss"],
                     detail=r["detail"] + f"; VW {vw['n']:,} rows: text {_rate(vw['text'])}, "
                                          f"own cache {_rate(vw['cache'])}; VW's error counts played actions")
    return rows


def full_info_rows(X, y, river_rounds: int) -> list[dict]:
    K = int(y.max()) + 1
    n = X.shape[0]
    t = time_ours(lambda: nf.Perceptron(K), X, y, nf.feedback.FullLabel(), n)
    learner = nf.Perceptron(K)
    nf.simulate(learner, X, y, nf.feedback.FullLabel(), n_rounds=n, seed=0)
    ours_after = float(np.mean(learner.predict(X) != y))
    rate_sk, err_sk = peers.sklearn_perceptron_epoch(X, y)
    rows = [{"workload": "full information, Perceptron, one pass", "ours": t.rounds_per_second, "ours_err": ours_after,
             "peer": "scikit-learn Perceptron.fit (max_iter=1)", "peer_rate": rate_sk, "peer_err": err_sk,
             "detail": "errors: training error after the pass (both)"}]
    order = np.random.default_rng(0).permutation(n)[:river_rounds]
    rv = peers.river_progressive(X, y, order)
    tr = time_ours(lambda: nf.Perceptron(K), X, y, nf.feedback.FullLabel(), n)
    row = {"workload": "full information, per example, progressive error", "ours": tr.rounds_per_second,
           "ours_err": tr.error_rate, "detail": f"ours {n:,} rounds; errors: online (predict, then learn)"}
    if rv is None:
        row.update(peer="river not installed")
    else:
        row.update(peer="river SoftmaxRegression", peer_rate=rv[0], peer_err=rv[1],
                   detail=row["detail"] + f"; river {river_rounds:,} rounds")
    rows.append(row)
    return rows


def sparse_rows(rounds: int) -> list[dict]:
    rows = []
    for n, d, nnz in SPARSE:
        X, y = rcv1_like(n, d, nnz)
        K = int(y.max()) + 1
        t = time_ours(lambda: nf.RCNBF(K, gamma=0.05, rho0=0.2, rho1=0.4, seed=0), X, y,
                      nf.feedback.NoisyBandit(0.2, 0.4), rounds)
        tq = time_ours(lambda: nf.SquareCB(K, seed=0), X, y, nf.feedback.NoisyBandit(0.2, 0.4), rounds)
        tp = time_ours(lambda: nf.Perceptron(K), X, y, nf.feedback.FullLabel(), n)
        rate_sk, err_sk = peers.sklearn_perceptron_epoch(X, y)
        nnz = X.nnz / n  # the mean, after duplicates were dropped
        ns_nnz = 1e9 / (t.rounds_per_second * nnz)
        rows.append({"workload": f"sparse CSR, RCNBF (0.2, 0.4): d = {d:,}, {nnz:.0f} non-zeros a row "
                                 f"({100 * nnz / d:.2g} %)",
                     "ours": t.rounds_per_second, "ours_err": t.error_rate,
                     "detail": f"{ns_nnz:.1f} ns per non-zero; {t.n_rounds:,} rounds"})
        rows.append({"workload": f"sparse CSR, SquareCB (0.2, 0.4), defaults: d = {d:,}, {nnz:.0f} non-zeros a row",
                     "ours": tq.rounds_per_second, "ours_err": tq.error_rate,
                     "detail": f"{1e9 / (tq.rounds_per_second * nnz):.1f} ns per non-zero; {tq.n_rounds:,} rounds"})
        rows.append({"workload": f"sparse CSR, Perceptron one pass: d = {d:,}, {nnz:.0f} non-zeros a row",
                     "ours": tp.rounds_per_second, "ours_err": tp.error_rate, "peer": "scikit-learn Perceptron.fit",
                     "peer_rate": rate_sk, "peer_err": err_sk,
                     "detail": f"{1e9 / (tp.rounds_per_second * nnz):.1f} ns per non-zero; "
                               "ours: online error; scikit-learn: training error after the epoch"})
    return rows


def validation_rows(X, y, rounds: int) -> list[dict]:
    """The cost of checking a CSR X's structure (check_X, once per input) against a simulate on it."""
    import scipy.sparse as sp

    from noisyfeedback._validation import check_X

    Xs = sp.csr_matrix(X)
    Xs.indices, Xs.indptr = Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)
    check_X(Xs)  # compile (or load from the disk cache)
    best = min(_timed(lambda: check_X(Xs)) for _ in range(5))
    K = int(y.max()) + 1
    t = time_ours(lambda: nf.RCNBF(K, gamma=0.05, rho0=0.2, rho1=0.4, seed=0), Xs, y,
                  nf.feedback.NoisyBandit(0.2, 0.4), rounds)
    return [{"workload": f"input check: check_X of the stream as CSR ({Xs.shape[0]:,}×{Xs.shape[1]}, "
                         f"{Xs.nnz:,} non-zeros)",
             "ours_text": f"{best * 1e3:.1f} ms",
             "detail": f"{100 * best / t.wall_time:.2f} % of a {t.n_rounds:,}-round RCNBF simulate on it "
                       f"({t.wall_time:.2f} s), which checks X once"}]


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def sweep_rows(data_dir, seeds: int, serial_seeds: int, workdir: Path) -> list[dict]:
    from noisyfeedback.lab import run_experiment

    def config(n_seeds, name):
        return {
            "name": name, "n_rounds": SWEEP["n_rounds"], "checkpoints": 30,
            "datasets": [{"name": "mnist", "normalize": True, "label": "MNIST"}],
            "channels": [{"name": "NoisyBandit", "params": {"rho0": [s[0] for s in SWEEP["settings"]],
                                                            "rho1": [s[1] for s in SWEEP["settings"]]},
                          "zip": [["rho0", "rho1"]]}],
            "learners": [{"name": k, "params": v, **({"match_channel": True} if k == "RCNBF" else {})}
                         for k, v in SWEEP["learners"].items()],
            "seeds": list(range(n_seeds)),
        }

    rows = []
    for jobs, n_seeds in ((1, serial_seeds), (2, seeds)):  # the figure has FIGURE_SEEDS seeds
        if n_seeds <= 0:
            continue
        out = workdir / f"sweep-j{jobs}"
        t0 = time.perf_counter()
        res = run_experiment(config(n_seeds, f"bench-sweep-j{jobs}"), out, jobs=jobs, data_dir=data_dir,
                             progress=False)
        wall = time.perf_counter() - t0
        from noisyfeedback.lab import read_results

        df = read_results(res)
        n_runs = len(df)
        per = df.groupby("learner")["loop_time"].sum().to_dict() if "learner" in df else {}
        full = wall * FIGURE_SEEDS / n_seeds
        rows.append({
            "workload": f"sweep: noisy-bandit figure on MNIST, 5 settings × 5 learners × {n_seeds} seeds × 1e6 "
                        f"rounds, -j {jobs}",
            "ours": None, "ours_text": f"{wall / 60:.1f} min ({n_runs} runs)"
                                       + (f"; scaled to {FIGURE_SEEDS} seeds: {full / 60:.1f} min"
                                          if n_seeds != FIGURE_SEEDS else ""),
            "detail": "loop seconds by learner: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(per.items())),
        })
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def render(rows: list[dict], stream: str, args) -> str:
    import importlib.metadata as md

    def ver(p):
        try:
            return md.version(p)
        except md.PackageNotFoundError:
            return "not installed"

    lines = [
        "# Benchmark results", "",
        f"Machine: {machine()}. Date: {dt.date.today().isoformat()}. noisyfeedback {nf.__version__}, "
        f"vowpalwabbit {ver('vowpalwabbit')}, river {ver('river')}, scikit-learn {ver('scikit-learn')}.",
        f"Dense stream: {stream}. Ours: best of 3 `nf.simulate` runs, JIT compilation excluded, one core. "
        "Ratio: ours / peer, examples per second.", "",
        "| workload | ours | ours error | peer | peer | peer error | ratio | detail |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = r.get("ours_text") or (_rate(r["ours"]) if r.get("ours") else "")
        peer_rate = r.get("peer_rate")
        ratio = f"{r['ours'] / peer_rate:.1f}×" if r.get("ours") and peer_rate else ""
        lines.append("| " + " | ".join([
            r["workload"], ours, f"{r['ours_err']:.4f}" if r.get("ours_err") is not None else "",
            r.get("peer", ""), _rate(peer_rate) if peer_rate else "",
            f"{r['peer_err']:.4f}" if r.get("peer_err") is not None else "", ratio, r.get("detail", ""),
        ]) + " |")
    return "\n".join(lines) + "\n"


#: the parts of the benchmark, in the order they run
PARTS = ["bandit", "full", "sparse", "sweep", "teachers", "validation", "noisy", "per_action", "index_gamma", "service",
         "recommend", "catalogue", "parquet_logs", "families", "label_issues", "ope_coverage"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("NOISYFEEDBACK_DATA"))
    ap.add_argument("--rounds", type=int, default=1_000_000, help="rounds of each timed simulate run")
    ap.add_argument("--vw-rounds", type=int, default=200_000, help="rows in VW's input file")
    ap.add_argument("--river-rounds", type=int, default=10_000)
    ap.add_argument("--sweep-seeds", type=int, default=2,
                    help="seeds of the -j 2 sweep, scaled up to the figure's 10 seeds in the table (0: no sweep)")
    ap.add_argument("--sweep-serial-seeds", type=int, default=1,
                    help="seeds of the serial sweep, extrapolated to --sweep-seeds (0: none)")
    ap.add_argument("--only", choices=PARTS, action="append")
    ap.add_argument("--service-seconds", type=float, default=60.0, help="length of the service load test")
    ap.add_argument("--recommend-rounds", type=int, default=1_000_000,
                    help="rounds of the recommended-learners comparison (benchmarks/recommend.py)")
    ap.add_argument("--recommend-vw-rounds", type=int, default=20_000)
    ap.add_argument("--per-action-seeds", type=int, default=3,
                    help="seeds of the flips-that-depend-on-the-action comparison (benchmarks/per_action_mnist.py)")
    ap.add_argument("--catalogue-rounds", type=int, default=200_000,
                    help="rounds of the catalogue learners' churn comparison with VW (benchmarks/catalogue_peers.py)")
    ap.add_argument("--catalogue-seeds", type=int, default=3)
    ap.add_argument("--catalogue-multiclass-rounds", type=int, default=20_000,
                    help="rounds of the multiclass candidate-list comparison (VW reads every candidate's copy "
                         "of the context: MNIST's file grows by ~1 MB a round)")
    ap.add_argument("--catalogue-slot-rounds", type=int, default=50_000, help="rounds of the slots comparison")
    ap.add_argument("--catalogue-vw-rounds", type=int, default=20_000, help="rounds in VW's ADF file (speed)")
    ap.add_argument("--parquet-rows", type=int, nargs="+", default=[1_000_000, 10_000_000],
                    help="sizes of the Parquet log read in chunks by fit_logged and evaluate_log")
    ap.add_argument("--families-rounds", type=int, default=None,
                    help="cap on the rounds of the catalogue stream families (benchmarks/catalogue_families.py; "
                         "default: each family's horizon, 50,000 to 500,000)")
    ap.add_argument("--families-seeds", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "make-bench.md"))
    args = ap.parse_args(argv)

    X, y, stream = load_stream(args.data_dir)
    work = peers.workdir()
    parts = args.only or PARTS
    rows: list[dict] = []
    extra = ""  # Markdown sections after the table (recommend)
    for part in parts:
        t0 = time.perf_counter()
        if part == "bandit":
            rows += bandit_rows(X, y, args.rounds, args.vw_rounds, work)
        elif part == "full":
            rows += full_info_rows(X, y, args.river_rounds)
        elif part == "sparse":
            rows += sparse_rows(args.rounds)
        elif part == "sweep" and args.sweep_seeds > 0:
            if not args.data_dir:
                print("sweep skipped: it runs on MNIST (--data-dir)", file=sys.stderr)
                continue
            rows += sweep_rows(args.data_dir, args.sweep_seeds, args.sweep_serial_seeds, work)
        elif part == "teachers":
            rows += teacher_rows()
        elif part == "validation":
            rows += validation_rows(X, y, args.rounds)
        elif part == "service":
            rows += service_rows(args.service_seconds)
        elif part == "recommend":
            import recommend

            extra += "\n" + recommend.sections(args.data_dir, args.recommend_rounds, args.recommend_rounds,
                                               args.recommend_vw_rounds)
        elif part == "noisy":
            rows += noisy_rows(args.data_dir)
        elif part == "per_action":
            if not args.data_dir:
                print("per_action skipped: it runs on MNIST and Fashion-MNIST (--data-dir)", file=sys.stderr)
                continue
            rows += per_action_rows(args.data_dir, args.rounds, args.per_action_seeds)
        elif part == "index_gamma":  # SquareCB's defaults against every fixed γ_scale (benchmarks/index_gamma.py)
            if not args.data_dir:
                print("index_gamma skipped: it runs on MNIST, Fashion-MNIST and Letter (--data-dir)", file=sys.stderr)
                continue
            import index_gamma

            seeds = tuple(range(args.per_action_seeds))
            extra += ("\n## SquareCB's defaults against every fixed γ_scale\n\n"
                      + index_gamma.table(index_gamma.run(args.data_dir, tuple(index_gamma.LABELS), args.rounds, seeds),
                                          args.rounds, seeds))
        elif part == "catalogue":
            rows += catalogue_rows(args.rounds, args.catalogue_vw_rounds)
            import catalogue_peers

            extra += "\n" + catalogue_peers.sections(args.data_dir, args.catalogue_rounds, args.catalogue_seeds,
                                                     slot_rounds=args.catalogue_slot_rounds,
                                                     mc_rounds=args.catalogue_multiclass_rounds)
        elif part == "parquet_logs":
            rows += parquet_log_rows(args.parquet_rows, work)
        elif part == "families":
            import catalogue_families

            extra += "\n" + catalogue_families.section(args.families_rounds, args.families_seeds)
        elif part == "label_issues":  # F1 and noise-matrix error against cleanlab (benchmarks/label_issues.py)
            import label_issues

            extra += "\n## Label issues against cleanlab\n" + label_issues.section(args.data_dir)
        elif part == "ope_coverage":  # coverage of the off-policy intervals (benchmarks/ope_coverage.py)
            import ope_coverage

            extra += "\n## Off-policy interval coverage\n" + ope_coverage.section()
        print(f"[{part}: {time.perf_counter() - t0:.0f} s]", file=sys.stderr, flush=True)
        Path(args.out).write_text(render(rows, stream, args) + extra)  # partial table after every part
    text = render(rows, stream, args) + extra
    Path(args.out).write_text(text)
    print(text)
    return 0


def catalogue_rows(rounds: int, vw_rounds: int) -> list[dict]:
    """CatalogueSquareCB's simulate speed (10 candidates, 20 context and 10 item features; targets: dense
    ≥ 500k rounds/s, hashed 2^18 ≥ 150k rounds/s, ≥ 5× VW's examples/s on the same stream)."""
    import catalogue_speed

    m = catalogue_speed.measure(rounds=rounds, vw_rounds=vw_rounds)
    vw = m["vw"]
    rows = []
    for key, label in (("dense", "dense, the interaction a bilinear form, oracle=\"adagrad\""),
                       ("hashed", "hashed into 2^18"),
                       ("dense_default",
                        "dense, defaults (oracle=\"auto\": ridge over D = 231 weights, O(D²) a round)")):
        wall, cpu = m[key]
        target = ("targets: dense ≥ 500k/s, hashed ≥ 150k/s" if key != "dense_default" else
                  "no target: the second-order oracle the defaults take for small D")
        row = {"workload": f"catalogue, CatalogueSquareCB {label}: 10 candidates, 20 context and 10 item features",
               "ours": wall, "detail": f"{_rate(cpu)} per CPU-second; {target}"}
        if vw is None:
            row.update(peer="VW not installed")
        else:
            row.update(peer="VW --cb_explore_adf --squarecb -q sa (ADF file, parse included)", peer_rate=vw[0])
            row["detail"] += f"; VW {_rate(vw[1])} per CPU-second: ours {cpu / vw[1]:.1f}× per CPU-second"
        rows.append(row)
    return rows


def parquet_log_rows(sizes, workdir) -> list[dict]:
    """A Parquet log (K = 10, 8 features) read in chunks through SquareCB.fit_logged and nf.ope.evaluate_log
    (IPS, SNIPS, DR with normal intervals), each in a fresh process (benchmarks/parquet_logs.py); targets:
    ≥ 500k rows/s for the estimates, peak RSS flat in the log's size."""
    import parquet_logs

    rows = []
    for r in parquet_logs.measure(sizes, workdir=str(workdir)):
        what = ("SquareCB.fit_logged(stream_log(file)), defaults" if r["mode"] == "fit" else
                "nf.ope.evaluate_log: IPS, SNIPS, DR (ridge, 2 passes) with normal intervals")
        rows.append({"workload": f"Parquet log of {r['n']:,} rows (K = 10, 8 features): {what}",
                     "ours_text": f"{r['rows_per_s']:,.0f} rows/s",
                     "detail": f"wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s "
                               f"({r['rows'] / max(r['cpu_s'], 1e-9):,.0f} rows per CPU-second), peak RSS "
                               f"{r['peak_rss_mb']:.0f} MB (the process, imports and compilation included)"})
    return rows


def teacher_rows() -> list[dict]:
    """The scale target of the teacher SVM: EvilTeacherSVM on m = 100 000, d = 20 000 (0.5 % dense), 100 teachers."""
    try:
        import teachers_scale
    except ImportError:
        return []
    r = teachers_scale.run()
    return [{"workload": "EvilTeacherSVM solved to tolerance: m = 100,000, d = 20,000 (0.5 %), 100 teachers",
             "ours_text": f"{r['time_s']:.1f} s", "detail": ", ".join(f"{k} {v}" for k, v in r.items()
                                                                      if k != "time_s")}]


def service_rows(seconds: float) -> list[dict]:
    """The service load test (benchmarks/service_load.py): rank+reward pairs over HTTP on 127.0.0.1 at
    1,000 pairs/s offered (500 for the action-feature shapes), for each request shape, on a SQLite log
    (fsynced) and, for the numeric and action-feature APIs in the same run, on PostgreSQL with 2 replicas
    (requests alternated between them)."""
    try:
        import service_load
    except ImportError:
        return []
    rows = []
    for shape in service_load.SHAPES:
        # replicas on PostgreSQL: the numeric and the action-feature API (multi-slot: SQLite only)
        for backend in ("sqlite", "postgres") if shape in ("numeric", "features") else ("sqlite",):
            try:
                rate = 1000.0 if shape == "numeric" else 500.0
                r = service_load.run(seconds=seconds, rate=rate, conns=32, shape=shape, backend=backend)
            except ImportError as exc:  # the service extra is not installed
                print(f"service benchmark skipped: {exc}", file=sys.stderr)
                return rows
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:  # no PostgreSQL server here
                print(f"service benchmark ({shape}, {backend}) skipped: {exc}", file=sys.stderr)
                continue
            where = ("SQLite log fsynced" if backend == "sqlite" else
                     f"PostgreSQL (fsync on), {r['replicas']} replicas, requests alternated")
            p99 = max(r["rank_p99_ms"], r["reward_p99_ms"])
            rows.append({
                "workload": f"decision service, {r['describe']}: rank+reward pairs over HTTP, {seconds:.0f} s at "
                            f"{rate:,.0f} pairs/s offered, 32 connections, {where}",
                "ours_text": f"{r['pairs_per_s']:,.0f} pairs/s",
                "detail": (f"rank p50/p95/p99 {r['rank_p50_ms']:.1f}/{r['rank_p95_ms']:.1f}/{r['rank_p99_ms']:.1f} ms, "
                           f"reward p50/p95/p99 {r['reward_p50_ms']:.1f}/{r['reward_p95_ms']:.1f}/"
                           f"{r['reward_p99_ms']:.1f} ms (worst p99 {p99:.1f} ms; pair p99 from its scheduled "
                           f"time {r['pair_p99_sched_ms']:.1f} ms), {r['pairs']:,} of {r['offered']:,} pairs "
                           f"sent, errors {r['errors']}, "
                           f"lost {r['lost']}, every replica learned every reward: "
                           f"{'yes' if r['learned_by_all'] else 'NO'}, server CPU "
                           f"{r['server_cpu_us_per_pair']:.0f} µs/pair")})
    if "features" in service_load.SHAPES:  # valid traffic while oversized requests flood in
        try:
            r = service_load.run(seconds=seconds, rate=500.0, conns=32, shape="features", flood_rate=10.0)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(f"service flood benchmark skipped: {exc}", file=sys.stderr)
            return rows
        p99 = max(r["rank_p99_ms"], r["reward_p99_ms"])
        rows.append({
            "workload": f"decision service, {r['describe']}: rank+reward pairs, {seconds:.0f} s at 500 pairs/s, while "
                        "10 authenticated 10,000-action rank requests a second flood in (SQLite log fsynced)",
            "ours_text": f"valid p99 {p99:.1f} ms",
            "detail": (f"rank p50/p99 {r['rank_p50_ms']:.1f}/{r['rank_p99_ms']:.1f} ms, reward p50/p99 "
                       f"{r['reward_p50_ms']:.1f}/{r['reward_p99_ms']:.1f} ms, "
                       f"{r['pairs']:,} of {r['offered']:,} pairs, "
                       f"errors {r['errors']}, lost {r['lost']}, flood answers {r['flood_statuses']}")})
    return rows


def per_action_rows(data_dir, rounds: int, seeds: int) -> list[dict]:
    """SquareCB under flips that depend on the action (ρ0 = 0.3 for the first half of the labels, ρ1 = 0.5 for
    the second) and uniform flips (0.15, 0.25), MNIST and Fashion-MNIST: told the per-action rates and
    estimating them, against SquareCB() on the same streams, and the share of the gap to SquareCB() without
    flips that each closes (benchmarks/per_action_mnist.py; its ``TARGETS``)."""
    import per_action_mnist as pa

    out = []
    for r in pa.run(data_dir, rounds=rounds, seeds=tuple(range(seeds))):
        if r["learner"] == "SquareCB":
            base = r
            continue
        target = pa.target_text(r)
        share = f"; closes {r['share']:.0%} of the gap" if r["setting"] == "action-dependent" and "share" in r else ""
        out.append({"workload": f"{r['learner']} vs SquareCB(), {r['dataset']}, {r['setting']} flips, "
                                f"{rounds:,} rounds, {r['seeds']} seeds (online error, mean ± SE)",
                    "ours_text": f"{r['ratio']:.3f}×", "ours_err": r["mean"], "peer": "SquareCB()",
                    "peer_err": base["mean"],
                    "detail": (f"target {target}; " if target else "") + f"SE {r['se']:.4f} vs {base['se']:.4f}"
                              + share + (f"; estimates in use at the end {r['in_use']}" if r.get("in_use") else "")})
    return out


def noisy_rows(data_dir) -> list[dict]:
    """The costs of the label-noise and regression learners: WeightedRLS at d = 20 (target ≥ 300k rounds/s) and
    CorrectedLogisticRegression.fit on 60,000 MNIST rows (target < 1 min). Quality against the peers:
    benchmarks/label_noise.py and benchmarks/regression_peers.py (minutes; run separately)."""
    from noisyfeedback.datasets.regression import ors_synthetic

    n = 1_000_000
    X, y = ors_synthetic(n_samples=n, seed=0)
    ch = nf.feedback.GaussianNoise.uniform(1.0, n_rounds=n, seed=1)
    nf.simulate(nf.WeightedRLS(lam=1.0), X[:1000], y[:1000], ch, n_rounds=1000, seed=0)  # JIT warm-up
    tr = nf.simulate(nf.WeightedRLS(lam=1.0), X, y, ch, n_rounds=n, seed=2)
    rows = [{"workload": "WeightedRLS (known variance), d = 20, 1M rounds", "ours_text": _rate(n / tr.wall_time),
             "detail": f"target ≥ 300k rounds/s; mse {tr.mse:.4f}"}]
    # confusion="estimate" against a fit with C given (target: within 5x; benchmarks/label_issues.py --speed)
    sys.path.insert(0, str(Path(__file__).parent))
    from label_issues import speed_table

    for r in speed_table(data_dir, seeds=(0,)):
        rows.append({"workload": f"CorrectedLogisticRegression confusion='estimate' vs C given, {r['data']}, "
                                 f"{r['params']}", "ours_text": f"{r['wall_ratio']:.1f}x",
                     "detail": f"target <= 5x; wall {r['estimate_wall']:.2f} s vs {r['known_wall']:.2f} s, CPU "
                               f"{r['cpu_ratio']:.1f}x; max |C_hat - C_realised| {r['C_vs_emp']:.3f}"})
    if data_dir:
        Xm, ym = nf.datasets.load("mnist", split="train", data_dir=data_dir)
        Xm = np.asarray(Xm.toarray() if sp.issparse(Xm) else Xm, dtype=np.float64)
        K, rho = 10, 0.2
        C = nf.feedback.symmetric_confusion(K, rho)
        yn = nf.feedback.ConfusionNoise(C).respond(ym, rng=np.random.default_rng(0))
        t0, c0 = time.perf_counter(), time.process_time()
        m = nf.CorrectedLogisticRegression(confusion=C, C=0.1).fit(Xm, yn)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        Xt, yt = nf.datasets.load("mnist", split="test", data_dir=data_dir)
        err = float(np.mean(m.predict(np.asarray(Xt.toarray() if sp.issparse(Xt) else Xt)) != yt))
        rows.append({"workload": "CorrectedLogisticRegression.fit, 60,000 MNIST rows, symmetric 0.2",
                     "ours_text": f"{wall:.1f} s", "ours_err": err,
                     "detail": f"target < 60 s; {m.n_iter_} L-BFGS iterations, CPU {cpu:.1f} s; error on the "
                               f"clean MNIST test split"})
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
