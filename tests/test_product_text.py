"""The product's text reads as a product, not as its builders' notebook.

README, docs, published reports, the package's source (docstrings, comments, the strings reports are
made of), the benchmarks' Markdown and the examples never mention work sessions, issue numbers,
acceptance items, the builders, machine paths (``/work/...``, ``/tmp/...``, home folders) or the
workplace's ``../shared`` folder. History belongs in the git log; data paths read ``--data-dir DATA``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: name -> pattern of a process word
PATTERNS: dict[str, re.Pattern] = {
    # "Session 9", "session 5", "RESULTS-partial-session5"
    "work-log heading": re.compile(r"\bsessions?[\s_-]*\d+", re.I),
    # "issue 15", "issue #15", "issues #15 and #16", a bare "#15" (not a CSS colour "#222;", not an anchor)
    "issue number": re.compile(r"\bissues?\s*#?\s*\d+|(?<![\w&/#])#\d{1,4}\b(?![\w;-])", re.I),
    # "acceptance 1", "acceptance item 4", "(acceptance: ...)", "A4" — but an "acceptance rate" is statistics
    "acceptance item": re.compile(r"(?i:\bacceptance\b(?!\s+rate))|\bA[1-9]\b"),
    "absolute machine path": re.compile(r"(?<![\w.~/-])/(?:work|tmp|root|home)/"),
    "workplace folder": re.compile(r"\.\./shared\b"),
    # "7 other agents", "the helpers" (the builders)
    "the builders": re.compile(r"\bagents?\b|\bhelpers?\b(?=\s+(?:session|agent|said|wrote|ran))", re.I),
}

#: what is the product's text: (folder or file, suffixes; None = the file itself)
SCOPE: list[tuple[str, tuple[str, ...] | None]] = [
    ("README.md", None),
    ("docs", (".md",)),
    ("mkdocs.yml", None),
    ("reports", (".md", ".html", ".json")),
    ("src", (".py", ".md", ".toml", ".json")),
    ("benchmarks", (".md",)),
    ("examples", (".md", ".toml", ".py")),
]


def process_words(text: str) -> list[tuple[int, str, str]]:
    """Every process word of ``text``: (line number, kind, the words)."""
    hits = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for kind, pattern in PATTERNS.items():
            hits += [(lineno, kind, m.group(0)) for m in pattern.finditer(line)]
    return hits


def product_files(root: Path = ROOT) -> list[Path]:
    files = []
    for name, suffixes in SCOPE:
        path = root / name
        if suffixes is None:
            files += [path] if path.is_file() else []
        elif path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes
                            and "__pycache__" not in p.parts)
    return files


def scan(files: list[Path], root: Path = ROOT) -> list[str]:
    """``path:line: kind: 'words'`` for every process word in ``files``."""
    out = []
    for path in files:
        for lineno, kind, words in process_words(path.read_text(encoding="utf-8", errors="replace")):
            out.append(f"{path.relative_to(root)}:{lineno}: {kind}: {words!r}")
    return out


def test_the_product_text_has_no_process_words():
    files = product_files()
    assert len(files) > 50 and any(f.name == "README.md" for f in files)  # the scope is not empty
    hits = scan(files)
    assert not hits, "process words in the product's text:\n" + "\n".join(hits)


@pytest.mark.parametrize("planted", [
    "## Session 9: the 4-wide scores are back",
    "RESULTS-partial-session5.md",
    "Published (issue #15, acceptance 1).",
    "see issue 15 for why",
    "issues #15 and #16",
    "as #20 asked",
    "acceptance item 4",
    "(acceptance: ≤ 0.5 at the noisy settings)",
    "A4 holds since the last run",
    "--data-dir /work/shared/data",
    "written to /tmp/ridge_rec.md",
    "cached in /root/.cache/noisyfeedback",
    "--data-dir ../shared/data",
    "measured while 7 other agents shared the 2 cores",
])
def test_the_checker_finds_a_planted_word(planted):
    assert process_words(f"a clean line\n{planted}\n"), planted


@pytest.mark.parametrize("clean", [
    "see [Speed](#speed-against-the-peers) and docs/algorithms.md §4.13",
    "color: #222; line-height: 1.5",
    "rejection sampling: rows drawn per round (at least n_samples / acceptance rate overall)",
    "--data-dir DATA, then $NOISYFEEDBACK_DATA, then ~/.cache/noisyfeedback",
    "https://example.org/home/index.html and src/noisyfeedback/tmp/x.py",
    "Table 1 of the paper; Fig. 4; 4 of 5 seeds; 0.4 × 0.4",
    "a1 = a0 + 1  # lower-case variables",
])
def test_the_checker_passes_clean_text(clean):
    assert process_words(clean) == []


def test_the_checker_finds_a_planted_file(tmp_path):
    """The scan over the product's folders fails on a page planted in one of them."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Results\n\nMeasured in session 7 on /work/main.\n")
    (tmp_path / "README.md").write_text("# clean\n")
    hits = scan(product_files(tmp_path), tmp_path)
    assert hits == ["docs/page.md:3: work-log heading: 'session 7'",
                    "docs/page.md:3: absolute machine path: '/work/'"]
