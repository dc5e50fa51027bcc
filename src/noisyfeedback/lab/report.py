"""Reports: a title and sections (text, figures, tables) written as Markdown and self-contained HTML.

``write_report(out_dir, title, sections)`` writes ``out_dir/index.md`` and
``out_dir/index.html``; figures become PNG files next to them (referenced by
relative paths, so the folder can be moved or opened from disk), tables are
rendered as Markdown and HTML tables. Every file is written atomically (a temp
file in ``out_dir``, then ``os.replace``; `noisyfeedback._io`).

>>> import pandas as pd, tempfile
>>> out = tempfile.mkdtemp()
>>> path = write_report(out, "Demo", [Section("Results", text=["All good."],
...                     tables={"Errors": pd.DataFrame({"learner": ["a"], "error": [0.125]})})])
>>> path.name, "| a | 0.125 |" in (path.parent / "index.md").read_text()
('index.html', True)
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._io import atomic_path, atomic_write_bytes

__all__ = ["Section", "write_report", "format_table"]


@dataclass
class Section:
    """One section of a report.

    heading : str
    text : paragraphs (a string is one paragraph); `code`, **bold** and [links](path) are rendered in HTML.
    figures : {name: matplotlib Figure}; saved as PNG, the name is the caption.
    tables : {caption: DataFrame} (or a list of DataFrames without captions).
    """

    heading: str
    text: list[str] | str = field(default_factory=list)
    figures: Mapping[str, Any] = field(default_factory=dict)
    tables: Mapping[str, pd.DataFrame] | list[pd.DataFrame] = field(default_factory=dict)

    @classmethod
    def coerce(cls, obj: Any) -> "Section":
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, Mapping):
            unknown = set(obj) - {"heading", "text", "figures", "tables"}
            if unknown:
                raise ValueError(f"unknown section key(s) {sorted(unknown)}; use heading, text, figures, tables.")
            if "heading" not in obj:
                raise ValueError("a report section needs a 'heading'.")
            return cls(**obj)
        raise TypeError(f"a report section is a Section or a dict; got {type(obj).__name__}.")

    def paragraphs(self) -> list[str]:
        return [self.text] if isinstance(self.text, str) else [str(p) for p in self.text]

    def table_items(self) -> list[tuple[str, pd.DataFrame]]:
        items = list(self.tables.items()) if isinstance(self.tables, Mapping) else [("", t) for t in self.tables]
        for cap, t in items:
            if not isinstance(t, pd.DataFrame):
                raise TypeError(f"table {cap!r} of section {self.heading!r} must be a pandas DataFrame; "
                                f"got {type(t).__name__}.")
        return items


# ----------------------------------------------------------------- tables
def _cell(v: Any, float_format: str) -> str:
    if isinstance(v, (np.ndarray, list, tuple)):
        return np.array2string(np.asarray(v), precision=3, threshold=6)
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and np.isnan(v)):
        return ""
    if isinstance(v, (float, np.floating)):
        return format(float(v), float_format)
    return str(v)


def format_table(df: pd.DataFrame, float_format: str = ".4g") -> tuple[list[str], list[list[str]]]:
    """(header, rows) of strings; the index is included when it is named or not a plain range."""
    show_index = df.index.name is not None or any(n is not None for n in df.index.names) or not (
        isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1
    )
    cols = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in df.columns]
    header = ([" / ".join(str(n or "") for n in df.index.names)] if show_index else []) + cols
    rows = []
    for idx, row in zip(df.index, df.itertuples(index=False, name=None)):
        cells = [_cell(v, float_format) for v in row]
        if show_index:
            key = " / ".join(map(str, idx)) if isinstance(idx, tuple) else str(idx)
            cells = [key] + cells
        rows.append(cells)
    return header, rows


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_table(df: pd.DataFrame, float_format: str) -> str:
    header, rows = format_table(df, float_format)
    numeric = [False] * (len(header) - len(df.columns)) + [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(df: pd.DataFrame, float_format: str) -> str:
    header, rows = format_table(df, float_format)
    numeric = [False] * (len(header) - len(df.columns)) + [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    th = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "\n".join(
        "<tr>" + "".join(f'<td class="{"num" if n else "txt"}">{_inline_html(c)}</td>' for c, n in zip(r, numeric))
        + "</tr>"
        for r in rows
    )
    return f"<table>\n<thead><tr>{th}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def _scrolling(table_html: str) -> str:
    """A table inside a box that scrolls sideways, so a wide table never runs off the page
    (a focusable region, so the keyboard can scroll it too)."""
    return f'<div class="table-wrap" role="region" tabindex="0">\n{table_html}\n</div>'


# ------------------------------------------------------------------- text
def _inline_html(text: str) -> str:
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    # [text](relative/link): links to files next to the report (e.g. sub-reports)
    out = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', out)
    return out


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
    return s[:60] or "figure"


#: reports with at least this many sections open with a table of contents
CONTENTS_MIN_SECTIONS = 5


def _anchor(text: str, used: set[str]) -> str:
    """The anchor of a heading or caption as GitHub makes it (lower case, punctuation dropped, spaces to
    hyphens, ``-1``, ``-2``... for repeats), so the Markdown contents also work where the page is
    rendered with GitHub's own heading ids; the HTML page uses the same ids."""
    base = re.sub(r"[^\w\- ]", "", text.lower().replace("**", "").replace("`", "")).replace(" ", "-") or "section"
    anchor, k = base, 1
    while anchor in used:
        anchor, k = f"{base}-{k}", k + 1
    used.add(anchor)
    return anchor


def _contents(entries: list[tuple[int, str, str]]) -> tuple[list[str], str]:
    """Markdown lines and HTML of a table of contents: ``entries`` = (level 0 section / 1 table, text, anchor)."""
    md = ["## Contents", ""] + [f"{'  ' * lvl}- [{_md_escape(t)}](#{a})" for lvl, t, a in entries] + [""]
    items, depth = [], 0
    for lvl, t, a in entries:
        if lvl > depth:
            items.append("<ul>")
        elif lvl < depth:
            items.append("</li>\n</ul></li>")
        elif items:
            items.append("</li>")
        items.append(f'<li><a href="#{a}">{_inline_html(t)}</a>')
        depth = lvl
    items += ["</li>"] + ["</ul></li>"] * depth
    html_ = '<nav class="contents">\n<h2>Contents</h2>\n<ul>\n' + "\n".join(items) + "\n</ul>\n</nav>"
    return md, html_


# ---------------------------------------------------------------- writing
def _save_figure(fig, path: Path, dpi: int) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")


_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 60rem;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.5; }
h1 { border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #eee; padding-bottom: .2rem; margin-top: 2rem; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: .9rem; }
.table-wrap { max-width: 100%; overflow-x: auto; margin: .5rem 0 1.2rem; }
table { border-collapse: collapse; font-size: .92rem; }
th, td { border: 1px solid #ccc; padding: .25rem .6rem; vertical-align: top; }
td.txt { max-width: 32rem; }
pre { overflow-x: auto; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: .3rem; }
code { background: #f4f4f4; padding: 0 .2rem; border-radius: 3px; }
footer { margin-top: 3rem; color: #888; font-size: .8rem; }
nav.contents ul { margin: .2rem 0; } nav.contents li { margin: .1rem 0; }
"""


def write_report(
    out_dir: str | os.PathLike,
    title: str,
    sections: Iterable[Section | Mapping[str, Any]],
    *,
    intro: str | list[str] | None = None,
    dpi: int = 120,
    float_format: str = ".4g",
) -> Path:
    """Write ``index.md``, ``index.html`` and one PNG per figure into ``out_dir``; return index.html's path.

    ``sections``: `Section` objects or dicts with keys heading, text,
    figures, tables. Floats in tables are written with ``float_format``;
    format cells yourself (as strings) for anything else, e.g. "0.12 ± 0.01".
    """
    from .._version import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    secs = [Section.coerce(s) for s in sections]
    intro_pars = [] if intro is None else ([intro] if isinstance(intro, str) else list(intro))

    md: list[str] = [f"# {title}", ""] + [p + "\n" for p in intro_pars]
    body: list[str] = [f"<h1>{html.escape(title)}</h1>"] + [f"<p>{_inline_html(p)}</p>" for p in intro_pars]
    # anchors: every section, and every captioned table (a long report opens with their contents)
    anchors: set[str] = {"contents"}
    sec_anchor = [_anchor(sec.heading, anchors) for sec in secs]
    tab_anchor = [[_anchor(c, anchors) if c else "" for c, _ in sec.table_items()] for sec in secs]
    if len(secs) >= CONTENTS_MIN_SECTIONS:
        entries = []
        for sec, a, tabs in zip(secs, sec_anchor, tab_anchor):
            entries.append((0, sec.heading, a))
            entries += [(1, c, ta) for (c, _), ta in zip(sec.table_items(), tabs) if c]
        toc_md, toc_html = _contents(entries)
        md += toc_md
        body.append(toc_html)
    used: set[str] = set()
    for sec, a, tabs in zip(secs, sec_anchor, tab_anchor):
        md += [f"## {sec.heading}", ""]
        body.append(f'<section>\n<h2 id="{a}">{html.escape(sec.heading)}</h2>')
        for p in sec.paragraphs():
            md += [p, ""]
            body.append(f"<p>{_inline_html(p)}</p>")
        for name, fig in sec.figures.items():
            if not hasattr(fig, "savefig"):
                raise TypeError(f"figure {name!r} of section {sec.heading!r} must be a matplotlib Figure; "
                                f"got {type(fig).__name__}.")
            stem, k = _slug(name), 2
            fname = f"{stem}.png"
            while fname in used:
                fname, k = f"{stem}-{k}.png", k + 1
            used.add(fname)
            _save_figure(fig, out / fname, dpi)
            md += [f"![{_md_escape(name)}]({fname})", "", f"*{name}*", ""]
            body.append(
                f'<figure><img src="{html.escape(fname)}" alt="{html.escape(name)}">'
                f"<figcaption>{_inline_html(name)}</figcaption></figure>"
            )
        for (caption, table), ta in zip(sec.table_items(), tabs):
            if caption:
                md += [f'<a id="{ta}"></a>', "", f"**{caption}**", ""]
            md += [_md_table(table, float_format), ""]
            tab = _html_table(table, float_format)
            if caption:
                tab = tab.replace("<table>", f'<table>\n<caption id="{ta}">{_inline_html(caption)}</caption>', 1)
            body.append(_scrolling(tab))
        body.append("</section>")
    footer = f"Written by noisyfeedback {__version__}."
    md += ["---", "", f"*{footer}*", ""]
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body)
        + f"\n<footer>{html.escape(footer)}</footer>\n</body>\n</html>\n"
    )
    atomic_write_bytes(out / "index.md", "\n".join(md).encode("utf-8"))
    index = out / "index.html"
    atomic_write_bytes(index, page.encode("utf-8"))
    return index
