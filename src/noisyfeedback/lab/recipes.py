"""``reproduce``: the registered papers, each rerunning a paper's experiments and writing a report.

A paper's recipe only *declares* (`Paper`, registered with `register_paper`; one
folder per paper under ``noisyfeedback/lab/papers/``, every module there imported when the papers
are listed or run): its plans (quick and full), its task kinds (pure functions,
`.engine.task_kind`), what to run (``run(engine, plan, data_dir) -> results``: tasks handed
to the engine, part by part; a TOML-style sweep is `.runner.sweep` on the same engine), its
claims (``claims(results, ctx) -> [Claim]``, the thresholds beside them) and its report sections
(``sections(results, claims, ctx)``). `run_paper` does the rest once for every paper: the
engine (the results store in ``<report>/results``, resume, backends, progress), the "N of M claims
hold" line with the links to the index and to the paper, the report, and ``claims.json`` for the
index. `claims_table` puts every number a paper states next to ours.

``quick``: bundled or generated data, minutes at most; ``data_dir``: where data files are (None:
the default search); ``jobs``: worker processes; ``progress``: True/False or a rich Progress to add
bars to.

``reproduce("all", ...)`` runs every paper into ``out/<name>/`` and writes ``out/index.html`` and
``out/index.md`` linking each report.
"""

from __future__ import annotations

import contextvars
import html
import json
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .store import atomic_write_bytes

__all__ = ["reproduce", "recipe_names", "RECIPES", "PAPERS", "RecipeError", "Claim", "claims_table", "Paper",
           "Context", "register_paper", "run_paper", "claims_summary", "availability_note"]


class RecipeError(RuntimeError):
    """One or more recipes of ``reproduce('all')`` failed (the index says which)."""


#: True while ``reproduce("all")`` runs a recipe (its report then links to ``../index.html``)
_IN_ALL: contextvars.ContextVar[bool] = contextvars.ContextVar("noisyfeedback_reproduce_all", default=False)


def recipe_names() -> list[str]:
    """The registered recipe names (what ``reproduce`` accepts, besides 'all')."""
    _load_builtin()
    return list(RECIPES)


def _load_builtin() -> None:
    """Import the modules that register papers: every module of ``noisyfeedback.lab.papers``
    and those listed in `BUILTIN_RECIPE_MODULES` (the parent process only: a worker imports
    the one module of its task's function, see `.engine`)."""
    import importlib
    import pkgutil

    from . import papers

    names = [f"{papers.__name__}.{m.name}" for m in pkgutil.iter_modules(papers.__path__)]
    for mod in names + list(BUILTIN_RECIPE_MODULES):
        importlib.import_module(mod)


#: extra modules imported by `recipe_names` / `reproduce` to register their recipes
BUILTIN_RECIPE_MODULES: list[str] = []


def reproduce(
    paper: str,
    quick: bool = False,
    data_dir: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    jobs: int = 1,
    progress: Any = True,
) -> Path:
    """Run a recipe (or 'all') and return the path of the report's ``index.html``.

    ``out``: the report folder (default ``./reproduce-<paper>``). For 'all', each
    recipe writes to ``out/<name>/`` and ``out/index.html`` links them; a failing
    recipe is listed there with its error and `RecipeError` is raised
    after the index is written.
    """
    _load_builtin()
    key = str(paper).strip().lower()
    if key != "all" and key not in RECIPES:
        raise ValueError(f"unknown recipe {paper!r}; allowed: {', '.join(list(RECIPES) + ['all'])}.")
    out_dir = Path(out) if out is not None else Path(f"reproduce-{key}")
    out_dir.mkdir(parents=True, exist_ok=True)
    ddir = None if data_dir is None else str(data_dir)
    if key != "all":
        return _run_one(RECIPES[key], quick, ddir, out_dir, jobs, progress)
    entries = []
    for name, recipe in RECIPES.items():
        t0 = time.perf_counter()
        token = _IN_ALL.set(True)
        try:
            path = _run_one(recipe, quick, ddir, out_dir / name, jobs, progress)
            entries.append((recipe, path, None, time.perf_counter() - t0))
        except Exception as exc:  # keep going: the index reports it
            entries.append((recipe, None, exc, time.perf_counter() - t0))
        finally:
            _IN_ALL.reset(token)
    index = _write_index(out_dir, entries, quick)
    failed = [(r.name, e) for r, _, e, _ in entries if e is not None]
    if failed:
        raise RecipeError(f"{len(failed)} recipe(s) failed: "
                          + "; ".join(f"{n}: {type(e).__name__}: {e}" for n, e in failed)
                          + f". The index ({index}) lists them.")
    return index


def _run_one(paper: "Paper", quick, data_dir, out_dir: Path, jobs, progress) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = Path(run_paper(paper, quick=bool(quick), data_dir=data_dir, out_dir=out_dir, jobs=jobs, progress=progress))
    if not path.is_file():
        raise RuntimeError(f"recipe {paper.name!r} returned {path}, which is not a file.")
    return path


QUICK_NOTE = ("Quick mode checks the pipeline (bundled or generated data, few rounds and seeds), not the "
              "papers' results: its claims are judged on runs far smaller than the papers'. Run without "
              "--quick for the reproductions.")


def _claims_info(path: Path) -> dict:
    """The report's ``claims.json`` (its "N of M claims hold" summary, the paper's link), or {}."""
    try:
        return json.loads((Path(path).parent / "claims.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _claims_text(path: Path) -> str:
    """"N of M claims hold (…)" from the report's ``claims.json``, or "" where it has none."""
    return _claims_info(path).get("summary", "")


_INDEX_CSS = ("body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
              "pre{font-size:.8em;overflow:auto}.table-wrap{max-width:100%;overflow-x:auto}"
              "table{border-collapse:collapse;font-size:.92rem}th,td{border:1px solid #ccc;padding:.25rem .6rem;"
              "vertical-align:top;text-align:left}th{background:#f4f4f4}td.num{text-align:right}"
              ".quick-note{background:#fff6d6;border-left:4px solid #e0b000;padding:.5rem .8rem}")


def _index_rows(out_dir: Path, entries) -> list[dict]:
    """One row per recipe for the index: its report's links, claims summary, time, or its error."""
    rows = []
    for recipe, path, exc, secs in entries:
        row = {"recipe": recipe, "secs": secs, "exc": exc, "rel": None, "info": {}}
        if path is not None:
            row["rel"] = os.path.relpath(path, out_dir).replace(os.sep, "/")
            row["info"] = _claims_info(path)
        rows.append(row)
    return rows


def _write_index(out_dir: Path, entries, quick: bool) -> Path:
    """``out/index.md`` and ``out/index.html``: one row per report (its claims, N of M, and its time),
    the totals, and in quick mode the plain statement that quick mode checks the pipeline only."""
    from .._version import __version__

    title = "noisyfeedback: reproductions" + (" (quick)" if quick else "")
    rows = _index_rows(out_dir, entries)
    n_hold = sum(r["info"].get("n_hold", 0) for r in rows)
    n_claims = sum(r["info"].get("n_claims", 0) for r in rows)
    n_fail = sum(r["info"].get("n_fail", 0) for r in rows)
    failed = [r for r in rows if r["exc"] is not None]
    total = (f"In all, {n_hold} of {n_claims} claims hold and {n_fail} do not (the rest are not judged), over "
             f"{len(rows) - len(failed)} reports" + (f"; {len(failed)} recipe(s) failed" if failed else "") + ".")
    mode = QUICK_NOTE if quick else ("Full mode: each report reruns its paper's experiments with the data found "
                                     "here; each report says what could not be run.")
    md = [f"# {title}", "", mode, "", total, "",
          "| report | recipe | claims | wall time | what it reruns |", "|---|---|---|---:|---|"]
    html_rows = []
    for r in rows:
        rec, info = r["recipe"], r["info"]
        claims = info.get("summary", "") if r["exc"] is None else "**failed**"
        paper = info.get("url")
        if r["rel"] is not None:
            rel = r["rel"]
            md_rel = rel[:-len(".html")] + ".md" if rel.endswith(".html") else rel
            name_md = f"[{rec.title}]({md_rel})" + (f" ([paper]({paper}))" if paper else "")
            name_html = (f'<a href="{html.escape(rel)}">{html.escape(rec.title)}</a>'
                         + (f' (<a href="{html.escape(paper)}">paper</a>)' if paper else ""))
            what = rec.description
        else:
            err = f"{type(r['exc']).__name__}: {r['exc']}"
            name_md, name_html, what = rec.title, html.escape(rec.title), err
        md.append(f"| {name_md} | `{rec.name}` | {claims or '—'} | {r['secs']:.1f} s | {what.replace('|', '/')} |")
        html_rows.append(f"<tr><td>{name_html}</td><td><code>{html.escape(rec.name)}</code></td>"
                         f"<td><strong>{html.escape(claims.strip('*')) or '—'}</strong></td>"
                         f'<td class="num">{r["secs"]:.1f} s</td><td>{html.escape(what)}</td></tr>')
    tracebacks = "".join(f"<h2>{html.escape(r['recipe'].name)} failed</h2><pre>"
                         f"{html.escape(''.join(traceback.format_exception(r['exc']))[-2000:])}</pre>\n"
                         for r in failed)
    footer = f"Written by noisyfeedback {__version__}."
    md += ["", "---", "", f"*{footer}*", ""]
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_INDEX_CSS}</style>\n"
            f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
            f'<p class="{"quick-note" if quick else "mode"}">{html.escape(mode)}</p>\n<p>{html.escape(total)}</p>\n'
            '<div class="table-wrap" role="region" tabindex="0">\n<table>\n<thead><tr><th>report</th><th>recipe</th>'
            "<th>claims</th><th>wall time</th><th>what it reruns</th></tr></thead>\n<tbody>\n"
            + "\n".join(html_rows) + "\n</tbody>\n</table>\n</div>\n" + tracebacks
            + f"<footer>{html.escape(footer)}</footer>\n</body>\n</html>\n")
    atomic_write_bytes(out_dir / "index.md", "\n".join(md).encode("utf-8"))
    return atomic_write_bytes(out_dir / "index.html", page.encode("utf-8"))


# ------------------------------------------------------------------ claims
@dataclass
class Claim:
    """A number (or statement) a paper gives, next to ours.

    ``paper`` and ``ours`` may be numbers or text; ``holds`` says whether ours
    agrees (None: not judged); ``note`` explains (e.g. "paper: Fig. 2, read off the plot").
    """

    what: str
    paper: Any
    ours: Any
    holds: bool | None = None
    note: str = ""


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return "" if v is None else str(v)


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """A report table: what, the paper's value, ours, whether it holds, note."""
    return pd.DataFrame([{
        "claim": c.what, "paper": _fmt(c.paper), "ours": _fmt(c.ours),
        "reproduced": {True: "yes", False: "**no**", None: "—"}[c.holds], "note": c.note,
    } for c in claims], columns=["claim", "paper", "ours", "reproduced", "note"])


def availability_note(missing: list[str], what: str = "data") -> str:
    """The one sentence every report uses for data that could not be had here ("" when nothing is missing)."""
    if not missing:
        return ""
    return (f"**Not available here** ({what}): " + "; ".join(missing)
            + ". Those parts are skipped; pass --data-dir with the files to run them.")


def claims_summary(claims: list[Claim]) -> dict[str, Any]:
    """How many claims hold, fail and are not judged, and the "N of M claims hold" sentence."""
    n = len(claims)
    hold = sum(c.holds is True for c in claims)
    fail = sum(c.holds is False for c in claims)
    open_ = n - hold - fail
    text = f"{hold} of {n} claims hold" + (f" ({open_} not judged)" if open_ else "")
    return {"n_claims": n, "n_hold": hold, "n_fail": fail, "n_not_judged": open_, "summary": text}


# ------------------------------------------------------------------ papers
@dataclass
class Context:
    """What a paper's claims and sections get besides the results."""

    quick: bool
    plan: dict
    out_dir: Path
    data_dir: str | None
    jobs: int
    seconds: float  #: wall time of this invocation's run (earlier invocations' tasks reused)
    resumed: int  #: tasks found already done
    ran: int  #: tasks run by this invocation


@dataclass(frozen=True)
class Paper:
    """A paper's recipe, declared (see the module docstring)."""

    name: str
    title: str
    url: str
    plan: Callable[[bool, str | None], dict]  #: (quick, data_dir) -> a fresh copy of the quick or full plan
    run: Callable[..., Any]  #: (engine, plan, data_dir) -> results (every task through the engine)
    claims: Callable[[Any, Context], list[Claim]]
    sections: Callable[[Any, list[Claim], Context], list]
    intro: str = ""
    description: str = ""


#: name -> Paper, in registration order: what ``reproduce`` runs (``PAPERS`` is the same dict)
RECIPES: dict[str, Paper] = {}
PAPERS = RECIPES


def register_paper(paper: Paper) -> Paper:
    """Register a declared paper as the recipe ``paper.name`` (letters, digits, '-' and '_'; not 'all')."""
    key = paper.name.strip().lower()
    if not key or key == "all" or not key.replace("-", "").replace("_", "").isalnum() or key != paper.name:
        raise ValueError(f"invalid recipe name {paper.name!r} (lower-case letters, digits, '-' and '_'; not 'all').")
    RECIPES[key] = paper
    return paper


def run_paper(paper: Paper, *, quick: bool, data_dir, out_dir, jobs: int = 1, progress: Any = True,
              plan: dict | None = None) -> Path:
    """Run a declared paper (its plan, or ``plan``) through the engine and write its report."""
    from .engine import Engine
    from .report import Section, write_report

    out_dir = Path(out_dir)
    plan = paper.plan(quick, data_dir) if plan is None else plan
    t0 = time.perf_counter()
    with Engine(out_dir / "results", name=paper.name, jobs=jobs, progress=progress) as eng:
        results = paper.run(eng, plan, data_dir)
    ctx = Context(bool(quick), plan, out_dir, data_dir, jobs, time.perf_counter() - t0, eng.resumed, eng.ran)
    claims = paper.claims(results, ctx)
    summary = claims_summary(claims)
    atomic_write_bytes(out_dir / "claims.json", (json.dumps({
        **summary, "paper": paper.name, "title": paper.title, "url": paper.url, "quick": bool(quick),
        "claims": [{"claim": c.what, "paper": _fmt(c.paper), "ours": _fmt(c.ours), "holds": c.holds} for c in claims]},
        indent=1) + "\n").encode("utf-8"))
    head = [f"**{summary['summary']}** in this run"
            + (" (quick mode: it checks the pipeline, not the paper's results)" if quick else "") + ".",
            ("[All reports](../index.html) · " if _IN_ALL.get() else "") + f"[The paper]({paper.url})."]
    sections = [Section("Summary", text=head)] + list(paper.sections(results, claims, ctx))
    return write_report(out_dir, paper.title + (" (quick)" if quick else ""), sections, intro=paper.intro)


# --------------------------------------------------------- example recipe
#: the example's γ grid (each learner's γ is chosen on the tuning seeds)
EXAMPLE_GAMMAS = [0.02, 0.05, 0.1, 0.2, 0.4]


def _example_plan(quick: bool, data_dir=None) -> dict:
    """The example's sweep (a config dict): quick, 5,000 examples and 20,000 rounds, 3 report seeds."""
    n_samples, n_rounds, seeds = (5_000, 20_000, 3) if quick else (100_000, 1_000_000, 10)
    return {
        "name": "example",
        "description": "Banditron vs RCNBF on SynSep under NoisyBandit(0.2, 0.4)",
        "n_rounds": n_rounds,
        "checkpoints": 60,
        "datasets": [{"name": "synsep", "n_samples": n_samples, "seed": 0}],
        "channels": [{"name": "NoisyBandit", "params": {"rho0": 0.2, "rho1": 0.4}}],
        "learners": [
            {"name": "Banditron", "params": {"gamma": list(EXAMPLE_GAMMAS)}},
            {"name": "RCNBF", "params": {"gamma": list(EXAMPLE_GAMMAS)}, "match_channel": True},
        ],
        "selection": {"param": "gamma", "metric": "error_rate", "tuning_seeds": [100, 101],
                      "report_seeds": list(range(seeds))},
    }


def _example_run(engine, plan: dict, data_dir) -> pd.DataFrame:
    """The sweep through the engine (``results/sweep/``): its results table."""
    from .runner import sweep

    return sweep(engine, plan, "sweep", data_dir=data_dir)


def _example_claims(df: pd.DataFrame, ctx: Context) -> list[Claim]:
    rep = df[df["phase"] == "report"]
    mean = rep.groupby("learner")["error_rate"].mean()
    b, r = float(mean.get("Banditron", np.nan)), float(mean.get("RCNBF", np.nan))
    return [Claim("RCNBF's final online error is below Banditron's under NoisyBandit(0.2, 0.4), each with its "
                  "best γ (docs/algorithms.md §8: 'RCNBF/RCINE far below Banditron under noise')",
                  "RCNBF < Banditron", f"RCNBF {r:.4f} vs Banditron {b:.4f}", bool(r < b),
                  "expectation from docs/algorithms.md §8; this example recipe has no paper of its own")]


def _example_sections(df: pd.DataFrame, claims: list[Claim], ctx: Context) -> list:
    from . import figures
    from .report import Section

    plan = ctx.plan
    n_samples, n_rounds = plan["datasets"][0]["n_samples"], plan["n_rounds"]
    seeds = len(plan["selection"]["report_seeds"])
    curves = figures.learning_curve_figures(df)
    sweeps = figures.sweep_figures(df)
    summary = figures.summary_table(df)
    return [
        Section("Set-up", text=[
            f"SynSep with {n_samples:,} examples (d = 400, K = 9); {n_rounds:,} rounds per run; feedback "
            "flipped with ρ0 = 0.2 (a wrong guess reported right) and ρ1 = 0.4 (a right guess reported wrong).",
            f"γ was chosen from {EXAMPLE_GAMMAS} per learner on tuning seeds 100 and 101 (lowest mean final error), "
            f"then each learner ran with its chosen γ on report seeds 0..{seeds - 1}.",
            f"Results table: `results/sweep/results.parquet` (one row per run; {len(df)} rows).",
            f"Wall time {ctx.seconds:.1f} s" + (", quick mode" if ctx.quick else "") + ".",
        ]),
        Section("Paper vs ours", tables={"Claims": claims_table(claims)}),
        Section("Learning curves", figures={f"{ds}, {ch}: cumulative online error (log-log)": fig
                                            for (ds, ch), fig in curves.items()},
                tables={"Final online error rate (report seeds)": summary.drop(columns=["mean", "std"])}),
        Section("Choice of γ", figures={f"{ds}, {ch}: final error vs {p} on the tuning seeds": fig
                                        for (ds, ch, p), fig in sweeps.items()},
                tables={"Chosen γ": figures.selection_table(df)}),
    ]


#: ``reproduce example``: a small declared recipe that proves the frame (registered like every paper)
EXAMPLE = register_paper(Paper(
    name="example", title="Example: Banditron vs RCNBF under noisy bandit feedback",
    url="https://arxiv.org/abs/2103.06079", plan=_example_plan, run=_example_run, claims=_example_claims,
    sections=_example_sections,
    intro="A small recipe that proves the `reproduce` frame: a declarative sweep with γ selection, a resumable "
          "results table, figures, and our numbers next to the expected ones (RCNBF: Agarwal & Manwani, the "
          "paper linked below).",
    description="SynSep, NoisyBandit(0.2, 0.4), γ chosen on separate seeds (proves the frame)."))
