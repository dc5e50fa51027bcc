"""Checks shared by the recipe tests: every link of a report resolves and its figures are real images."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img" and a.get("src"):
            self.refs.append(("img", a["src"]))
        if tag == "a" and a.get("href"):
            self.refs.append(("a", a["href"]))


def checked_images(report: Path, page: str | None = None, min_bytes: int = 5_000) -> list[str]:
    """Assert that every local <a href> and <img src> of the HTML report resolves and that every
    image has at least ``min_bytes``; return the image paths in page order."""
    parser = _Refs()
    parser.feed(page if page is not None else report.read_text(encoding="utf-8"))
    for kind, ref in parser.refs:
        if re.match(r"^[a-z]+:", ref) or ref.startswith("#"):
            continue
        assert (report.parent / ref.split("#")[0]).is_file(), f"<{kind}> {ref} does not resolve"
    imgs = [r for kind, r in parser.refs if kind == "img"]
    for src in imgs:
        assert (report.parent / src).stat().st_size > min_bytes, f"{src} is too small to be a figure"
    return imgs
