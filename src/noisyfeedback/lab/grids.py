"""Tuning grids that do not bind: the paper's grid first, then extended past whichever edge holds the best.

A baseline tuned on a grid whose best value sits on the grid's edge is under-tuned: the true best may lie
further out. `extend_grid` evaluates the paper's grid, and while the best value is an edge of
everything evaluated so far, evaluates one more value past that edge — geometrically, by the grid's own
ratio at that edge — until the best is interior, the parameter's range is exhausted, or ``max_steps``
values were added. Both bests are reported: the paper's grid's and the extended grid's.

>>> res = extend_grid(lambda g: (g - 0.5) ** 2, [0.005, 0.01, 0.02, 0.05, 0.1, 0.2], high=1.0)
>>> res.paper_best, res.best, res.interior
(0.2, 0.4, True)
>>> res.added
(0.4, 0.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

__all__ = ["GridResult", "extend_grid", "next_value"]

#: at most this many values are added past the paper's grid, per tuning
MAX_STEPS = 4


@dataclass(frozen=True)
class GridResult:
    """The outcome of a tuning: every value tried and its score (lower is better)."""

    scores: dict[float, float]
    paper_grid: tuple[float, ...]
    added: tuple[float, ...] = field(default=())

    @property
    def best(self) -> float:
        """The best value over everything evaluated (first of ties, in ascending order)."""
        return _argmin(self.scores)

    @property
    def paper_best(self) -> float:
        """The best value on the paper's grid alone."""
        return _argmin({g: self.scores[g] for g in self.paper_grid})

    @property
    def interior(self) -> bool:
        """Whether the best value has an evaluated value on each side."""
        values = sorted(self.scores)
        return values[0] < self.best < values[-1]


def _argmin(scores: dict[float, float]) -> float:
    finite = {g: s for g, s in scores.items() if not math.isnan(s)}
    if not finite:
        raise ValueError("every value of the grid scored NaN.")
    return min(sorted(finite), key=finite.__getitem__)


def next_value(values: Sequence[float], side: str, low: float | None = None, high: float | None = None,
               factor: float | None = None) -> float | None:
    """The next value past the ``side`` ("low" or "high") edge of sorted ``values``, or None.

    Geometric by ``factor`` (default: the ratio of the two values at that edge; 10 for a one-value grid);
    a value that would reach an open bound ``low``/``high`` is replaced by the midpoint between the edge and
    the bound, and None is returned once that midpoint is indistinguishable from the edge.
    """
    values = sorted(values)
    edge = values[0] if side == "low" else values[-1]
    if factor is None:
        pair = values[:2] if side == "low" else values[-2:]
        factor = pair[1] / pair[0] if len(pair) == 2 and pair[0] > 0 else 10.0
    if not factor > 1:
        raise ValueError(f"The 'factor' parameter of next_value must be > 1. Got {factor!r} instead.")
    nxt = edge / factor if side == "low" else edge * factor
    bound = low if side == "low" else high
    if bound is not None and ((side == "low" and nxt <= bound) or (side == "high" and nxt >= bound)):
        nxt = (edge + bound) / 2
        if abs(nxt - edge) <= 1e-9 * max(abs(edge), 1e-300):
            return None
    return float(nxt)


def extend_grid(score: Callable[[float], float], grid: Sequence[float], *, low: float | None = 0.0,
                high: float | None = None, max_steps: int = MAX_STEPS, factor: float | None = None) -> GridResult:
    """Evaluate ``score`` on ``grid``, then extend past the binding edge until the best is interior.

    ``low``/``high`` are the parameter's open bounds (γ ∈ (0, 1): ``low=0, high=1``). At most
    ``max_steps`` values are added; the paper's grid's best and the extended best are both kept.
    """
    grid = tuple(sorted(float(g) for g in grid))
    if not grid:
        raise ValueError("The 'grid' parameter of extend_grid must not be empty.")
    scores = {g: float(score(g)) for g in grid}
    added: list[float] = []
    while len(added) < max_steps:
        values = sorted(scores)
        best = _argmin(scores)
        if len(values) > 1 and values[0] < best < values[-1]:
            break
        side = "low" if best == values[0] and len(values) > 1 else "high"
        if len(values) == 1:  # one value: try above first
            side = "high"
        nxt = next_value(values, side, low=low, high=high, factor=factor)
        if nxt is None or nxt in scores:
            break
        scores[nxt] = float(score(nxt))
        added.append(nxt)
    return GridResult(scores=scores, paper_grid=grid, added=tuple(added))
