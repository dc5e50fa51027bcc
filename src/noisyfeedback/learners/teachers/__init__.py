"""Learning from many teachers, some evil (Dekel & Shamir 2009; docs/algorithms.md §4.12).

- `LinearSVM` — the plain soft-margin SVM of eq. (1) (the baseline).
- `EvilTeacherSVM` — the teacher-constrained SVM of eq. (4), solved to a certified optimum.
- `TeacherSGD` — the Section 6 heuristic: Pegasos with per-teacher step caps.
"""

from .evil_teachers import EvilTeacherSVM
from .svm import LinearSVM
from .teacher_sgd import TeacherSGD

__all__ = ["LinearSVM", "EvilTeacherSVM", "TeacherSGD"]
