"""Learners for labels corrupted by a confusion matrix (Louche & Ralaivola 2015)."""

from .label_issues import estimate_label_confusion, find_label_issues
from .uma import UMA, make_kernel_uma

__all__ = ["UMA", "make_kernel_uma", "find_label_issues", "estimate_label_confusion"]
