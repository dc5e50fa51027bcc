"""Defaults that mean something: the CLI's regression channel is noisy enough for NLMS and ORS to differ as
the paper says (ORS's scaling pays under label noise), and TeacherSGD() learns untuned."""

import re

import numpy as np
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback.cli import app


def cli_mse(learner: str) -> float:
    res = CliRunner().invoke(app, ["simulate", "-l", learner, "--dataset", "ors_synthetic", "--rounds", "5000"],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return float(re.search(r"mse\s+([0-9.]+)", res.output).group(1))


def test_cli_nlms_and_ors_differ_as_the_paper_says():
    nlms, ors = cli_mse("NLMS"), cli_mse("ORS")
    assert ors < 0.9 * nlms, (nlms, ors)


def test_cli_default_noise_is_used_only_when_not_given():
    from noisyfeedback.cli import DEFAULT_FEEDBACK_PARAMS, build_feedback

    ch = build_feedback(None, nf.NLMS, {}, {}, {})
    assert ch.variance == DEFAULT_FEEDBACK_PARAMS["GaussianNoise"]["variance"] > 0
    assert build_feedback(None, nf.NLMS, {}, {}, {"variance": 0.0}).variance == 0.0
