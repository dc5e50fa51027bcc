"""Long reports open with a table of contents whose links land: every section and every captioned table
has an anchor, in the Markdown (GitHub's heading ids, explicit ones for tables) and in the HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from noisyfeedback.lab.report import CONTENTS_MIN_SECTIONS, Section, _anchor, write_report

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted(p for p in (ROOT / "reports").iterdir() if (p / "index.md").is_file())


def md_targets(md: str) -> set[str]:
    """The anchors a Markdown page offers: its headings (as GitHub makes them) and explicit ids."""
    used: set[str] = set()
    heads = {_anchor(h, used) for h in re.findall(r"^#{1,6} (.+)$", md, re.M)}
    return heads | set(re.findall(r'<a id="([^"]+)"></a>', md))


def links_land(md: str, page: str) -> None:
    md_links = re.findall(r"\]\(#([^)]+)\)", md)
    html_links = re.findall(r'href="#([^"]+)"', page)
    assert md_links and html_links
    assert set(md_links) <= md_targets(md), set(md_links) - md_targets(md)
    ids = set(re.findall(r' id="([^"]+)"', page))
    assert set(html_links) <= ids, set(html_links) - ids
    assert len(re.findall(r' id="([^"]+)"', page)) == len(ids), "an id is used twice"


def test_a_long_report_opens_with_its_contents(tmp_path):
    tables = {"Errors (mean)": pd.DataFrame({"a": [1.5]}), "Errors (mean) again": pd.DataFrame({"b": [2]})}
    secs = [Section(f"Part {i}: γ and `x`", text="t", tables=tables) for i in range(CONTENTS_MIN_SECTIONS)]
    page = write_report(tmp_path, "T", secs, intro="intro").read_text()
    md = (tmp_path / "index.md").read_text()
    assert md.index("## Contents") < md.index("## Part 0")
    assert "- [Part 0: γ and `x`](#part-0-γ-and-x)" in md and "  - [Errors (mean)](#errors-mean)" in md
    assert "(#errors-mean-1)" in md  # the second section's table of the same caption
    assert '<nav class="contents">' in page and page.index("<nav") < page.index("<section>")
    links_land(md, page)


def test_a_short_report_has_no_contents(tmp_path):
    page = write_report(tmp_path, "T", [Section("Only", text="t")]).read_text()
    assert "Contents" not in (tmp_path / "index.md").read_text() and "<nav" not in page


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.name)
def test_the_published_reports_have_contents_that_land(report):
    md, page = (report / "index.md").read_text(), (report / "index.html").read_text()
    sections = [h for h in re.findall(r"^## (.+)$", md, re.M) if h != "Contents"]
    assert len(sections) >= CONTENTS_MIN_SECTIONS and "## Contents" in md
    contents = md.split("## Contents")[1].split("\n## ")[0]
    assert all(f"[{h}]" in contents for h in sections)
    links_land(md, page)
