"""Learners for labels corrupted by a confusion matrix (Louche & Ralaivola 2015)."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from .label_issues import estimate_label_confusion, find_label_issues
    from .uma import UMA, make_kernel_uma

_LAZY = {
    'estimate_label_confusion': '.label_issues',
    'find_label_issues': '.label_issues',
    'UMA': '.uma',
    'make_kernel_uma': '.uma',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = ["UMA", "make_kernel_uma", "find_label_issues", "estimate_label_confusion"]
