"""The checks of a raw request body made before it is parsed: its nesting depth and, for a large body, the
number of its actions, from the bytes' structure (vectorised with numpy), so that a hostile body costs little
and never reaches the parser."""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["LARGE_BODY", "json_depth", "too_many_actions"]


@functools.lru_cache(maxsize=1)  # the depth and the action count of one body read it once
def _structure(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(the bytes, whether each is in a string, whether each opens one, the nesting depth after each byte
    outside strings) of a JSON text, vectorised (a regular expression or a parse of a 10,000-action body
    costs several times more): a quote not escaped by an odd run of backslashes toggles "inside a string"."""
    a = np.frombuffer(raw, dtype=np.uint8)
    quote = a == 0x22
    if b"\\" in raw:
        idx = np.arange(a.size)
        run = idx - np.maximum.accumulate(np.where(a == 0x5C, -1, idx))  # backslashes ending at each byte
        quote[1:] &= run[:-1] % 2 == 0
    inside = np.cumsum(quote) % 2 == 1  # a string's opening quote and bytes (not its closing quote)
    outside = ~inside & ~quote
    step = (outside & ((a == 0x5B) | (a == 0x7B))).astype(np.int32) - (outside & ((a == 0x5D) | (a == 0x7D)))
    return a, inside, quote & inside, np.cumsum(step)


def json_depth(raw: bytes, limit: int) -> int:
    """The nesting depth of a JSON text, computed only when it could exceed ``limit`` (0 otherwise): the
    running count of open brackets outside strings (linear, no recursion)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return 0
    return int(_structure(raw)[3].max(initial=0))


#: bodies from this size on are counted for their actions before they are validated
LARGE_BODY = 16 << 10


def too_many_actions(raw: bytes, limit: int) -> int:
    """The number of actions of a large JSON body when it lists more than ``limit`` (0 otherwise): the
    elements of the top-level ``actions`` array counted from the bytes' structure (the commas at its
    depth), so that a body of thousands of actions is refused before any parse of it; anything else
    (another shape, invalid JSON) is left to the validation, which says what is wrong."""
    if len(raw) < LARGE_BODY or b'"actions"' not in raw:
        return 0
    a, inside, opening, depth = _structure(raw)
    n, pos = 0, raw.find(b'"actions"')
    while pos >= 0:
        if opening[pos] and depth[pos] == 1:  # a key of the top-level object
            s = pos + 9
            while s < a.size and raw[s] in b" \t\r\n:":
                s += 1
            if s < a.size and raw[s] == 0x5B and depth[s] == 2:
                ends = np.flatnonzero(depth[s:] < 2)
                e = s + int(ends[0]) if ends.size else a.size
                body = raw[s + 1:e]
                if body.strip():
                    inner = a[s + 1:e]
                    commas = (inner == 0x2C) & (depth[s + 1:e] == 2) & ~inside[s + 1:e]
                    n = max(n, int(commas.sum()) + 1)
        pos = raw.find(b'"actions"', pos + 1)
    return n if n > limit else 0
