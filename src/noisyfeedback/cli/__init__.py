"""The command line: `noisyfeedback` (simulate, run, reproduce, the lab) in `main`, the VW-log commands
(train, predict, evaluate) in `vw`, the service's commands in `noisyfeedback.service.cli`."""

from .main import DEFAULT_FEEDBACK_PARAMS, app, build_feedback, console, parse_params

__all__ = ["app", "console", "parse_params", "DEFAULT_FEEDBACK_PARAMS", "build_feedback"]
