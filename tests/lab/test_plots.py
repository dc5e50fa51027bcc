"""Plots and reports: pure figures (no pyplot state), learning curves from Traces and tables."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import noisyfeedback as nf
from noisyfeedback.lab.figures import learning_curves, short_label, short_name, traces_to_frame
from noisyfeedback.lab.report import Section, write_report


@pytest.fixture(scope="module")
def traces():
    X, y = nf.datasets.synsep(n_samples=500, seed=0)
    out = []
    for seed in (0, 1):
        out.append(nf.simulate(nf.Perceptron(9), X, y, nf.feedback.FullLabel(), n_rounds=2000, seed=seed))
        out.append(nf.simulate(nf.Banditron(9, gamma=0.1), X, y, nf.feedback.NoisyBandit(0.2, 0.4),
                               n_rounds=2000, seed=seed))
    return out


def test_short_names():
    assert short_name("Banditron(n_classes=9, gamma=0.1, seed=0)") == "Banditron γ=0.1"
    assert short_name("RCNBF(n_classes=9, gamma=0.05, rho0=0.2, rho1=0.4)") == "RCNBF γ=0.05 ρ0=0.2 ρ1=0.4"
    assert short_name("Banditron(n_classes=9)") == "Banditron γ=0.1"  # default shown
    assert short_name("Perceptron(n_classes=9)") == "Perceptron"
    assert short_name("NoisyBandit(rho0=0.2, rho1=0.4)", positional=True) == "NoisyBandit(0.2,0.4)"
    assert short_name("ConfusionNoise(C=[[0.8, 0.2], [0.2, 0.8]])", positional=True) == "ConfusionNoise"
    assert short_name("perceptron") == "perceptron"


def test_traces_grouped_by_label(traces):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = learning_curves(traces)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before  # nothing left in pyplot's registry
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert len(labels) == 2  # two seeds per configuration -> one mean line each
    assert labels[0].startswith("Perceptron, FullLabel") and "(mean of 2)" in labels[0]
    assert labels[1].startswith("Banditron γ=0.1, NoisyBandit(0.2,0.4)")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.collections) == 2  # the min-max bands
    assert short_label(traces[1]) == "Banditron γ=0.1, NoisyBandit(0.2,0.4)"


def test_explicit_labels_and_linear_axes(traces):
    fig = learning_curves(traces, labels=["a", "b", "c", "d"], logx=False, logy=False, band=None, title="T")
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b", "c", "d"]
    assert ax.get_xscale() == "linear" and ax.get_title() == "T" and not ax.collections
    # one line's data is the trace's curve
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), traces[0].curve)


def test_dataframe_mean_and_band():
    cps = np.array([1, 10, 100])
    df = pd.DataFrame({
        "label": ["A", "A", "A", "B"],
        "seed": [0, 1, 2, 0],
        "checkpoints": [cps] * 4,
        "curve": [np.array([1.0, 0.5, 0.1]), np.array([1.0, 0.3, 0.2]), np.array([1.0, 0.4, 0.3]),
                  np.array([0.0, 0.2, 0.3])],
    })
    fig = learning_curves(df, band="std")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].get_ydata(), [1.0, 0.4, 0.2])
    assert np.isnan(lines[1].get_ydata()[0])  # zero masked on a log axis


def test_dataframe_from_traces_and_learner_column(traces):
    frame = traces_to_frame(traces)
    assert {"label", "checkpoints", "curve", "seed", "error_rate"} <= set(frame.columns)
    fig = learning_curves(frame.drop(columns="label"))  # labels made from learner/feedback reprs
    assert len(fig.axes[0].get_lines()) == 2


def test_draws_into_given_axes(traces):
    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    assert learning_curves(traces[:1], ax=ax2) is fig
    assert len(ax2.get_lines()) == 1 and not ax1.get_lines()


def test_differing_checkpoints_are_interpolated():
    df = pd.DataFrame({"label": ["A", "A"], "checkpoints": [np.array([1, 10, 100]), np.array([1, 100])],
                       "curve": [np.array([1.0, 0.5, 0.1]), np.array([1.0, 0.3])]})
    (line,) = learning_curves(df).axes[0].get_lines()
    np.testing.assert_allclose(line.get_xdata(), [1, 10, 100])
    np.testing.assert_allclose(line.get_ydata(), [1.0, 0.575, 0.2])


def test_bad_inputs():
    with pytest.raises(ValueError, match="curve"):
        learning_curves(pd.DataFrame({"label": ["a"], "checkpoints": [np.array([1])]}))
    with pytest.raises(ValueError, match="band"):
        learning_curves(pd.DataFrame(), band="iqr")
    with pytest.raises(ValueError, match="nothing to plot"):
        learning_curves([])


def test_write_report(tmp_path, traces):
    fig = learning_curves(traces)
    table = pd.DataFrame({"learner": ["Perceptron", "Banditron | noisy"], "error": [0.0125, 0.5]})
    path = write_report(tmp_path / "rep", "My <report>", [
        Section("Curves", text=["Some `code` and **bold**.", "Second paragraph."],
                figures={"Learning curves": fig}, tables={"Errors": table}),
        {"heading": "Same figure name", "figures": {"Learning curves": fig}, "tables": [table]},
    ], intro="Intro text.")
    assert path == tmp_path / "rep" / "index.html"
    pngs = sorted(p.name for p in (tmp_path / "rep").glob("*.png"))
    assert pngs == ["learning-curves-2.png", "learning-curves.png"]
    assert (tmp_path / "rep" / "learning-curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html_text = path.read_text()
    assert "<title>My &lt;report&gt;</title>" in html_text
    assert 'src="learning-curves.png"' in html_text and "<code>code</code>" in html_text
    assert "<td class=\"num\">0.0125</td>" in html_text and "Banditron | noisy" in html_text
    md = (tmp_path / "rep" / "index.md").read_text()
    assert md.startswith("# My <report>")
    assert "![Learning curves](learning-curves.png)" in md
    assert "| Banditron \\| noisy | 0.5 |" in md
    assert not list((tmp_path / "rep").glob("*.tmp")) and not list((tmp_path / "rep").glob(".*"))


def test_report_section_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown section key"):
        write_report(tmp_path, "t", [{"heading": "h", "body": "x"}])
    with pytest.raises(TypeError, match="DataFrame"):
        write_report(tmp_path, "t", [Section("h", tables={"x": [1, 2]})])


def test_wide_tables_scroll_inside_the_page(tmp_path):
    """Every table sits in a box that scrolls sideways (the page never gets wider than its column)."""
    import re

    wide = pd.DataFrame({f"column {i}": [f"a long cell value number {i}"] for i in range(30)})
    page = write_report(tmp_path, "Wide", [Section("Wide table", tables={"wide": wide, "small": wide.iloc[:, :2]})]
                        ).read_text()
    assert page.count('<div class="table-wrap" role="region" tabindex="0">\n<table>') == 2
    assert page.count("<table>") == 2 and page.count("</table>\n</div>") == 2
    css = re.search(r"\.table-wrap \{([^}]*)\}", page).group(1)
    assert "overflow-x: auto" in css and "max-width: 100%" in css


def test_coinciding_curves_stay_visible():
    """Two identical curves get different line styles and markers, the later one thinner and on top."""
    run = (np.array([1, 10, 100, 1000]), np.array([1.0, 0.5, 0.3, 0.2]))
    df = pd.DataFrame({"label": ["A", "B", "C"], "checkpoints": [run[0]] * 3, "curve": [run[1]] * 3})
    a, b, c = learning_curves(df).axes[0].get_lines()
    assert len({a.get_linestyle(), b.get_linestyle(), c.get_linestyle()}) == 3
    assert len({a.get_marker(), b.get_marker(), c.get_marker()}) == 3
    assert a.get_linewidth() > b.get_linewidth() > c.get_linewidth() and a.get_zorder() < b.get_zorder()


def test_coinciding_sweep_lines_stay_visible():
    """Two learners with the same final errors on the γ grid: different dashes and markers, both drawn."""
    from noisyfeedback.lab.figures import sweep_figure

    df = pd.DataFrame([{"learner": le, "learner.gamma": g, "seed": s, "error_rate": 0.1 + g}
                       for le in ("Banditron", "RCNBF") for g in (0.05, 0.2) for s in (0, 1)])
    a, b = sweep_figure(df, "gamma").axes[0].get_lines()
    np.testing.assert_array_equal(a.get_ydata(), b.get_ydata())
    assert a.get_linestyle() != b.get_linestyle() and a.get_marker() != b.get_marker()
    assert a.get_zorder() < b.get_zorder()
