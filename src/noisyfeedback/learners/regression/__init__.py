"""Online regression from noisy targets: NLMS and ORS (Moroshko & Crammer), with label budgets."""
