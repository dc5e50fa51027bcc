"""Ours against Vowpal Wabbit on cb_adf text logs (``make bench``; also runnable alone).

The log: n examples, each a ``shared |User ...`` line with 8 named user features and 10 action lines
``|Item ...`` with 8 named item features each (categorical names such as ``u3=17`` and numeric
``name:value`` pairs), the logged action's line labelled ``0:cost:probability`` (cost −1 a click, 0
none; clicks from a fixed logistic model of user × item, so there is something to learn). Written by
:func:`write_log` (seeded, deterministic).

Commands compared, each as its own process so that wall time, CPU time (user + system) and peak
RSS (``getrusage`` of the child) are the command's own:

- train: ``noisyfeedback train --data FILE --model m.npz -q UI -b 18`` vs
  ``python -m vowpalwabbit --cb_explore_adf --squarecb -q UI -b 18 -d FILE -f vw.model --quiet``
- predict: ``noisyfeedback predict --data FILE --model m.npz --predictions p.txt`` vs
  ``python -m vowpalwabbit -t -i vw.model -d FILE -p vw.txt --quiet``
- evaluate: ``noisyfeedback evaluate --data FILE --model m.npz`` (VW has no counterpart)

VW is the ``vowpalwabbit`` Python package's library behind its command line (``python -m
vowpalwabbit``); its parser runs on a second thread.

Before the table, the three commands run once on a log of ``WARM_UP`` examples: on a fresh install that
run compiles the kernels into numba's cache (printed apart, as the cost of a first run), so that the
table measures every size with the kernels loaded from the cache.

    python benchmarks/vw_logs.py --sizes 100000 1000000 [--sizes ... 10000000] --out benchmarks/results/vw_logs.md
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

N_ITEMS = 10
N_FEATURES = 8


#: examples of the warm-up log (`main`)
WARM_UP = 1_000


def write_log(path: str | os.PathLike, n: int, seed: int = 0, block: int = 20_000) -> Path:
    """A cb_adf log of ``n`` examples (module doc), written ``block`` examples at a time."""
    rng = np.random.default_rng(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    wu = rng.normal(size=(N_FEATURES, 50))
    wi = rng.normal(size=(N_FEATURES, 50))
    with open(path, "w", encoding="ascii", newline="\n") as fh:
        for lo in range(0, n, block):
            m = min(block, n - lo)
            u = rng.integers(0, 50, size=(m, N_FEATURES))
            it = rng.integers(0, 50, size=(m, N_ITEMS, N_FEATURES))
            xv = np.round(rng.random((m, N_ITEMS)), 2)
            su = wu[np.arange(N_FEATURES), u].sum(axis=1)
            si = wi[np.arange(N_FEATURES)[None, None, :], it].sum(axis=2)
            logit = 0.4 * (su[:, None] * si) / N_FEATURES - 1.5 + xv
            chosen = rng.integers(0, N_ITEMS, size=m)
            pclick = 1.0 / (1.0 + np.exp(-logit[np.arange(m), chosen]))
            click = rng.random(m) < pclick
            out = []
            for i in range(m):
                out.append("shared |User " + " ".join(f"u{j}={u[i, j]}" for j in range(N_FEATURES - 1))
                           + f" age:{u[i, -1] / 50:.2f}\n")
                for a in range(N_ITEMS):
                    feats = " ".join(f"i{j}={it[i, a, j]}" for j in range(N_FEATURES - 1)) + f" price:{xv[i, a]:g}"
                    lab = f"0:{-1 if click[i] else 0}:0.1 " if a == chosen[i] else ""
                    out.append(f"{lab}|Item {feats}\n")
                out.append("\n")
            fh.write("".join(out))
    return path




def measured(cmd: list[str]) -> dict:
    """run() in a fresh Python helper so that the peak RSS is this command's alone."""
    helper = ("import resource,subprocess,sys,time,json;t=time.perf_counter();"
              "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);w=time.perf_counter()-t;"
              "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
              "print(json.dumps({'rc':p.returncode,'wall':w,'cpu':r.ru_utime+r.ru_stime,'rss':r.ru_maxrss/1024,"
              "'err':p.stderr[-1500:]}))")
    proc = subprocess.run([sys.executable, "-c", helper, *cmd], capture_output=True, text=True)
    import json

    res = json.loads(proc.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res['rc']}): {res['err']}")
    return res


def compare(path: Path, work: Path, with_vw: bool = True) -> list[dict]:
    nf = [str(Path(sys.executable).with_name("noisyfeedback"))]
    vw = [sys.executable, "-m", "vowpalwabbit"]
    model = work / "m.npz"
    rows = []
    rows.append({"task": "train", "who": "noisyfeedback", **measured(
        nf + ["train", "--data", str(path), "--model", str(model), "-q", "UI", "-b", "18", "--no-progress"])})
    if with_vw:
        rows.append({"task": "train", "who": "vw", **measured(
            vw + ["--cb_explore_adf", "--squarecb", "-q", "UI", "-b", "18", "-d", str(path), "-f",
                  str(work / "vw.model"), "--quiet"])})
    rows.append({"task": "predict", "who": "noisyfeedback", **measured(
        nf + ["predict", "--data", str(path), "--model", str(model), "--predictions", str(work / "p.txt"),
              "--no-progress"])})
    if with_vw:
        rows.append({"task": "predict", "who": "vw", **measured(
            vw + ["-t", "-i", str(work / "vw.model"), "-d", str(path), "-p", str(work / "vw.txt"), "--quiet"])})
    rows.append({"task": "evaluate", "who": "noisyfeedback", **measured(
        nf + ["evaluate", "--data", str(path), "--model", str(model), "--no-progress"])})
    return rows


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--work", default="/tmp/nf_vw_logs")
    ap.add_argument("--no-vw", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    work = Path(args.work)
    lines = ["| examples | command | ours wall s | VW wall s | ours CPU s | VW CPU s | ours peak RSS MB "
             "| VW peak RSS MB |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    # JIT warm-up kept out of the table: the three commands once on a small log (on a fresh install they
    # compile the kernels into numba's cache: reported apart, as what a first run costs)
    warm = compare(write_log(work / f"log_{WARM_UP}.vw", WARM_UP), work, with_vw=False)
    warm_note = ("warm-up, untimed above (" + f"{WARM_UP:,} examples; a fresh install compiles the kernels here): "
                 + "; ".join(f"{r['task']} {r['wall']:.1f} s, {r['rss']:.0f} MB" for r in warm))
    print(warm_note, flush=True)
    for n in args.sizes:
        path = work / f"log_{n}.vw"
        if not path.exists():
            write_log(path, n)
        rows = compare(path, work, not args.no_vw)
        for task in ("train", "predict", "evaluate"):
            o = next(r for r in rows if r["task"] == task and r["who"] == "noisyfeedback")
            v = next((r for r in rows if r["task"] == task and r["who"] == "vw"), None)
            def f(r, k, fmt):
                return fmt.format(r[k]) if r else "–"

            lines.append(f"| {n:,} | {task} | {o['wall']:.1f} | {f(v, 'wall', '{:.1f}')} | {o['cpu']:.1f} | "
                         f"{f(v, 'cpu', '{:.1f}')} | {o['rss']:.0f} | {f(v, 'rss', '{:.0f}')} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n\n" + warm_note + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return text


if __name__ == "__main__":
    print(main())
