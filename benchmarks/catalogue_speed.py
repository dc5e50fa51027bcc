"""Rounds per second of ``nf.simulate`` for the catalogue learners: 10 candidates a round, 20 context and
10 item features (the synthetic ranking stream), dense bilinear with the AdaGrad oracle and hashed into 2^18;
best of 3 runs, JIT warm-up excluded. The defaults on this stream (``oracle="auto"``: the ridge oracle over
its D = 231 weights, O(D²) a round) are timed too, on a tenth of the rounds. Optionally VW's
``--cb_explore_adf --squarecb -q`` run natively on the same stream written as a VW ADF file (``--vw``), and
the index SquareCB on digits in the same run as a yardstick of how busy the machine is (``--yardstick``).

    nice -n 10 python benchmarks/catalogue_speed.py --rounds 1000000 --yardstick
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import noisyfeedback as nf  # noqa: E402


def write_stream_adf(stream, path: str, actions: np.ndarray, costs: np.ndarray, probs: np.ndarray) -> None:
    """The stream as VW's multi-line ADF text (``nf.datasets`` writer): shared namespace ``s`` with the context
    columns as features ``0``, ``1``, …, one action line per candidate with namespace ``a``, the logged
    ``0:cost:probability`` label on the chosen candidate's line."""
    from noisyfeedback.datasets.vw_adf import ADFExample, CBLabel, write_vw_adf

    r = stream.rounds
    C, Z = r.context, r.items
    exs = []
    for i in range(r.n_rounds):
        exs.append(ADFExample(
            shared={"s": {str(j): float(v) for j, v in enumerate(C[i]) if v != 0}},
            actions=[{"a": {str(j): float(v) for j, v in enumerate(Z[row]) if v != 0}}
                     for row in range(r.offsets[i], r.offsets[i + 1])],
            label=CBLabel(int(actions[i]), float(costs[i]), float(probs[i]))))
    write_vw_adf(path, exs)


def measure(rounds: int = 1_000_000, stream_rounds: int = 20_000, vw_rounds: int = 20_000) -> dict:
    """Rounds/s (wall and per CPU-second, best of 3) of CatalogueSquareCB dense and hashed 2^18, and VW's
    examples/s on the same stream as an ADF file (None without VW): what ``make bench`` reports."""
    stream = nf.datasets.ranking_stream(n_rounds=stream_rounds, seed=0, examination=None)
    ch = nf.feedback.NoisyBandit(0.0, 0.0)
    out = {}
    for key, mk, n in (("dense", lambda: nf.CatalogueSquareCB(oracle="adagrad", seed=0), rounds),
                       ("hashed", lambda: nf.CatalogueSquareCB(features="hashed", bits=18, seed=0), rounds),
                       ("dense_default", lambda: nf.CatalogueSquareCB(seed=0), max(rounds // 10, 1))):
        nf.simulate(mk(), stream, None, ch, n_rounds=2000, seed=0)
        walls, cpus = [], []
        for _ in range(3):
            c0 = time.process_time()
            walls.append(nf.simulate(mk(), stream, None, ch, n_rounds=n, seed=0).wall_time)
            cpus.append(time.process_time() - c0)
        out[key] = (n / min(walls), n / min(cpus))
    out["vw"] = vw_rate(stream, vw_rounds)
    return out


def vw_rate(stream, n_rounds: int):
    """VW --cb_explore_adf --squarecb -q sa on the first n_rounds of the stream written as an ADF file
    (uniformly logged actions): examples per wall-second, parsing included; None without VW."""
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        if not shutil.which("vw"):
            return None
    n = min(n_rounds, stream.n_rounds)
    sub = stream.take(np.arange(n))
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 10, size=n)
    clicks = rng.random(n) < sub.rewards[sub.rounds.offsets[:-1] + actions]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "stream.vw")
        write_stream_adf(sub, path, actions, -clicks.astype(float), np.full(n, 0.1))
        cmd = ["--cb_explore_adf", "--squarecb", "-q", "sa", "--quiet", "-d", path]
        return _time_vw(cmd, n)


def _time_vw(cmd: list[str], n: int) -> tuple[float, float]:
    """(examples per wall-second, per CPU-second) of VW run natively on its -d file (the vw binary's CPU time
    from the children's rusage, the package's in-process)."""
    import resource

    vw = shutil.which("vw")
    t = time.perf_counter()
    if vw:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([vw, *cmd], check=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    else:
        from vowpalwabbit import pyvw

        c0 = time.process_time()
        pyvw.Workspace(" ".join(cmd)).finish()  # with -d the package runs VW's own parser and learner loop
        cpu = time.process_time() - c0
    return n / (time.perf_counter() - t), n / cpu


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--stream-rounds", type=int, default=20_000, help="rounds of the stream (cycled)")
    ap.add_argument("--vw", action="store_true", help="also time VW natively on the stream as an ADF file")
    ap.add_argument("--vw-rounds", type=int, default=50_000)
    ap.add_argument("--yardstick", action="store_true", help="also time the index SquareCB on digits")
    args = ap.parse_args(argv)
    stream = nf.datasets.ranking_stream(n_rounds=args.stream_rounds, seed=0, examination=None)
    ch = nf.feedback.NoisyBandit(0.0, 0.0)
    rows = []
    for label, mk, n in (("dense (bilinear), oracle=\"adagrad\"",
                          lambda: nf.CatalogueSquareCB(oracle="adagrad", seed=0), args.rounds),
                         ("hashed 2^18", lambda: nf.CatalogueSquareCB(features="hashed", bits=18, seed=0), args.rounds),
                         ("dense, defaults (oracle=\"auto\": ridge, D = 231)", lambda: nf.CatalogueSquareCB(seed=0),
                          max(args.rounds // 10, 1))):
        nf.simulate(mk(), stream, None, ch, n_rounds=2000, seed=0)
        runs, cpu = [], []
        for _ in range(3):
            c0 = time.process_time()
            runs.append(nf.simulate(mk(), stream, None, ch, n_rounds=n, seed=0))
            cpu.append(time.process_time() - c0)  # CPU time of the whole call (set-up included)
        best = min(t.wall_time for t in runs)
        rows.append((label, n / best, n / min(cpu)))
        print(f"CatalogueSquareCB {label}: {n / best / 1e3:,.0f}k rounds/s wall, "
              f"{n / min(cpu) / 1e3:,.0f}k rounds per CPU-second "
              f"(regret {runs[0].metrics['regret_rate']:.4f}, {n:,} rounds)", flush=True)
    if args.yardstick:
        X, y = nf.datasets.load("digits")
        nf.simulate(nf.SquareCB(10, seed=0), X, y, ch, n_rounds=2000, seed=0)
        best = min(nf.simulate(nf.SquareCB(10, seed=0), X, y, ch, n_rounds=args.rounds, seed=0).wall_time
                   for _ in range(3))  # wall time
        print(f"yardstick: index SquareCB on digits (K=10, d=64): {args.rounds / best / 1e3:,.0f}k rounds/s",
              flush=True)
    if args.vw:
        vw = shutil.which("vw")
        n = min(args.vw_rounds, stream.n_rounds)
        sub = stream.take(np.arange(n))
        rng = np.random.default_rng(0)
        actions = rng.integers(0, 10, size=n)
        clicks = rng.random(n) < sub.rewards[sub.rounds.offsets[:-1] + actions]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stream.vw")
            write_stream_adf(sub, path, actions, -clicks.astype(float), np.full(n, 0.1))
            cmd = ["--cb_explore_adf", "--squarecb", "-q", "sa", "--quiet", "-d", path]
            vw_wall, vw_cpu = _time_vw(cmd, n)  # in process when there is no vw binary (parsing included)
        print(f"VW --cb_explore_adf --squarecb -q sa ({'vw binary' if vw else 'vowpalwabbit package'}): "
              f"{vw_wall / 1e3:,.1f}k examples/s wall, {vw_cpu / 1e3:,.1f}k per CPU-second (file of {n} rounds, "
              "parse included)", flush=True)
        for label, rate, cpu_rate in rows:
            print(f"  {label}: {rate / vw_wall:.1f}x VW's examples/s (wall), {cpu_rate / vw_cpu:.1f}x per CPU-second")


if __name__ == "__main__":
    main()
