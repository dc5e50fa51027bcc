"""Multiclass online learners under full-label or (noisy) bandit feedback."""
