"""The documentation site: it builds with ``mkdocs build --strict`` (a broken link, a missing page or an
API reference to a name that does not exist fails), and every Python block of its pages runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
#: every page whose ```python blocks are run: the tutorials and the guides written to run end to end
#: (other pages may show reference snippets that need files of the reader's)
PAGES = TUTORIALS + [ROOT / "docs" / name for name in ("index.md", "recommended.md", "data.md")]

FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return [m.group(1) for m in FENCE.finditer(text)]


def test_python_blocks_are_found():
    text = "intro\n```python\nx = 1\n```\n\n```\nnot python\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x + 1\n"]


def test_every_tutorial_has_code():
    assert TUTORIALS, "docs/tutorials/ has no pages"
    for page in TUTORIALS:
        assert python_blocks(page.read_text(encoding="utf-8")), f"{page.name} has no ```python block"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_page_code_runs(page, tmp_path, monkeypatch):
    """The page's Python blocks, in order, in one namespace, in a fresh folder (as a reader would)."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"tutorial_{page.stem}"}
    for i, block in enumerate(python_blocks(page.read_text(encoding="utf-8")), 1):
        code = compile(block, f"{page.name} (python block {i})", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own code


def test_mkdocs_build_strict(tmp_path):
    """``make docs``: the whole site, API reference included, with warnings as errors."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"),
                           "--config-file", str(ROOT / "mkdocs.yml")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in ("index.html", "recommended/index.html", "api/learners/index.html", "tutorials/logs/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    # the API reference is rendered from the docstrings, not left as a directive
    api = (tmp_path / "site" / "api" / "learners" / "index.html").read_text(encoding="utf-8")
    assert "SquareCB" in api and "inverse-gap" in api and ":::" not in api
    # no page shows reStructuredText roles (mkdocstrings renders Markdown, not :func:`x`) or an escaped bar
    # that Markdown left inside a table's code
    raw = []
    for html in (tmp_path / "site").rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        raw += [f"{html.relative_to(tmp_path / 'site')}: {m.group(0)}" for m in RAW_MARKUP.finditer(text)]
    assert not raw, "raw markup in the built site:\n" + "\n".join(raw[:20])


#: a reST role left in the HTML (``:func:`` before a code span or a backquote) or a literal ``\|``
RAW_MARKUP = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|ref):(?=<code>|`)|\\\|")


def test_raw_markup_pattern():
    assert RAW_MARKUP.search("see :func:<code>evaluate</code>") and RAW_MARKUP.search("a \\| b")
    assert not RAW_MARKUP.search("see <code>evaluate</code> | and a:b")


def test_readme_code_runs(tmp_path, monkeypatch):
    """The README's Python blocks, in order, next to a small VW log like the one its second block reads."""
    import numpy as np

    import noisyfeedback as nf

    monkeypatch.chdir(tmp_path)
    X, y = nf.datasets.load("digits", normalize=True)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 10, len(y))
    clicks = (actions == y).astype(int)
    nf.datasets.write_vw_cb("log.vw", X, actions, clicks, np.full(len(y), 0.1))
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    namespace: dict = {"__name__": "readme"}
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md (python block {i})", "exec"), namespace)  # noqa: S102


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the manual belongs in docs/"


def test_readme_links_exist():
    """Every relative link of the README names a file or folder of the repository."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert targets
    for t in targets:
        if "://" not in t:
            assert (ROOT / t).exists(), t


def test_readme_vw_commands_run(tmp_path, monkeypatch):
    """The README's VW block, command by command, from a copy of a fresh clone's test data: each exits 0,
    and the 0-good/1-bad option it shows is the one that makes the model lower the cost."""
    import shlex
    import shutil

    from typer.testing import CliRunner

    from noisyfeedback.cli import app

    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Vowpal Wabbit logs")[1].split("\n## ")[0]
    commands = [line for block in re.findall(r"```\n(.*?)```", section, re.S) for line in block.splitlines()
                if line.startswith("noisyfeedback ")]
    assert [c.split()[1] for c in commands] == ["train", "predict", "evaluate"]
    assert "--reward one-minus-cost" in commands[0]
    shutil.copytree(ROOT / "tests" / "data" / "vw", tmp_path / "tests" / "data" / "vw")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        result = CliRunner().invoke(app, shlex.split(command)[1:])
        assert result.exit_code == 0, (command, result.output)
    assert (tmp_path / "model.npz").is_file() and (tmp_path / "preds.txt").stat().st_size > 0
