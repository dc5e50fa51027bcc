"""Multiclass learners that predict label sets: MC-SLP (full information) and MC-DBF (diluted bandit feedback)."""
