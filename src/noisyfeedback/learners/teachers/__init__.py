"""Learning from many teachers, some evil (Dekel & Shamir 2009; docs/algorithms.md §4.12).

- `LinearSVM` — the plain soft-margin SVM of eq. (1) (the baseline).
- `EvilTeacherSVM` — the teacher-constrained SVM of eq. (4), solved to a certified optimum.
- `TeacherSGD` — the Section 6 heuristic: Pegasos with per-teacher step caps.
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from .evil_teachers import EvilTeacherSVM
    from .svm import LinearSVM
    from .teacher_sgd import TeacherSGD

_LAZY = {
    'EvilTeacherSVM': '.evil_teachers',
    'LinearSVM': '.svm',
    'TeacherSGD': '.teacher_sgd',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = ["LinearSVM", "EvilTeacherSVM", "TeacherSGD"]
