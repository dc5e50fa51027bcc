"""A config's name names the folder ./results/<name>: a name that is a path is refused."""

import pytest

try:  # the lab wing's home, or the experiments package before the move
    from noisyfeedback.lab.config import ConfigError, parse_config
except ImportError:
    from noisyfeedback.experiments.config import ConfigError, parse_config

BASE = {"n_rounds": 100, "datasets": ["synsep"], "channels": ["FullLabel"], "learners": ["Perceptron"]}


@pytest.mark.parametrize("name", ["../escape", "a/../../b", "/tmp/abs", "..", ".", "sub/dir", "a\\b", "~/x", " ",
                                  "x\0y"])
def test_a_path_as_name_is_refused(name):
    with pytest.raises(ConfigError, match="name.*plain name"):
        parse_config({**BASE, "name": name})


@pytest.mark.parametrize("name", ["sweep", "noisy-bandit sweep 2", "a.b", "..x"])
def test_plain_names_are_accepted(name):
    assert parse_config({**BASE, "name": name}).name == name
