"""Plots: pure functions from results (Traces or a results table) to matplotlib Figures.

Nothing here touches pyplot's global state: figures are built with
:class:`matplotlib.figure.Figure` (Agg rendering on save), so they can be made in
worker processes, tests and servers without a display.
"""

from .curves import learning_curves, short_label, short_name, traces_to_frame

__all__ = ["learning_curves", "short_label", "short_name", "traces_to_frame"]
