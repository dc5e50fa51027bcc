"""Learners for labels corrupted by a confusion matrix (Louche & Ralaivola 2015)."""

from .uma import UMA, make_kernel_uma

__all__ = ["UMA", "make_kernel_uma"]
