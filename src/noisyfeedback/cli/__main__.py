"""`python -m noisyfeedback.cli`: the same command line as `noisyfeedback`."""

from .main import app

app()
