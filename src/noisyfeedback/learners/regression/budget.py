"""Label-budget strategies of ORS (Moroshko & Crammer, Section 4.2; docs/algorithms.md §4.11).

With a budget B (average labels per round, B ≥ 1) a round takes either one noisy
label or k = ⌈B⌉ of them. The strategies decide which rounds take k:

``"const"``
    every round with probability p = (B − 1)/(k − 1) (the expected spend is B a round;
    the realised spend varies around it).
``"begin"``
    the first ⌊horizon·p⌋ rounds (needs ``horizon``, the number of rounds; spends at
    most B·horizon).
``"auto"``
    look at the first label ỹ; stay with it with probability a/(a + (ỹ − ŷ)²),
    otherwise take k − 1 more. ``a`` is set by hand.
``"auto_self_tuned"``
    ``"auto"`` with a starting at ``a`` (the paper: 1) and, after every 100 rounds,
    doubled when the labels spent per round so far exceed 0.95·B and halved when they
    fall below it. A round takes k labels only while the total stays within B·rounds,
    so the spend never exceeds the budget (the paper's safety margin of 5 % makes this
    cap rarely bind).

Every strategy draws one uniform per round from the learner's ``rng_`` (``"begin"``
included, so the random stream does not depend on the strategy).
"""

from __future__ import annotations

import math

from ...kernels.regression import (
    STRATEGY_ALL,
    STRATEGY_AUTO,
    STRATEGY_AUTO_TUNED,
    STRATEGY_BEGIN,
    STRATEGY_CONST,
)

__all__ = ["STRATEGIES", "budget_plan"]

STRATEGIES = {
    "const": STRATEGY_CONST,
    "begin": STRATEGY_BEGIN,
    "auto": STRATEGY_AUTO,
    "auto_self_tuned": STRATEGY_AUTO_TUNED,
}


def budget_plan(budget: float | None, strategy: str, horizon: int | None) -> tuple[int, float, int, float, int]:
    """(strategy code, B, k, p, n_begin) for the kernels; no budget is STRATEGY_ALL.

    >>> budget_plan(1.5, "const", None)
    (1, 1.5, 2, 0.5, 0)
    >>> budget_plan(2.5, "begin", 1000)
    (2, 2.5, 3, 0.75, 750)
    """
    if budget is None:
        return STRATEGY_ALL, 0.0, 1, 0.0, 0
    B = float(budget)
    k = max(1, math.ceil(B))
    p = (B - 1.0) / (k - 1) if k > 1 else 0.0
    n_begin = int(math.floor(horizon * p)) if (strategy == "begin" and horizon is not None) else 0
    return STRATEGIES[strategy], B, k, p, n_begin
