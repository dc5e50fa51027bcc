"""VW's multi-line text formats (cb_adf, ccb): round trips, VW's documented examples, errors with
file and line, and interop with the ``vowpalwabbit`` package (VW parses our files into the same hashed
features as ours and learns from them; we read VW's files)."""

import gzip

import numpy as np
import pytest

from noisyfeedback.datasets import (
    ADFExample,
    CBLabel,
    CCBExample,
    CCBOutcome,
    CCBSlot,
    detect_vw_format,
    read_vw_adf,
    read_vw_ccb,
    write_vw_adf,
    write_vw_ccb,
)
from noisyfeedback.datasets.vw_adf import adf_lines, ccb_lines

NAMESPACES = [" ", "User", "Action", "u", "Slot", "x_1"]
NAMES = ["a", "b", "age", "city", "user=Tom", "c_3", "42", "t.x"]
STRINGS = ["paris", "red", "Tom", "x:y", "a=b"]


def _features(rng, allow_strings=True):
    out = {}
    for ns in rng.choice(NAMESPACES, size=rng.integers(0, 4), replace=False):
        fs = {}
        for f in rng.choice(NAMES, size=rng.integers(1, 5), replace=False):
            u = rng.random()
            if u < 0.3:
                fs[str(f)] = 1.0
            elif u < 0.45 and allow_strings:
                fs[str(f)] = str(rng.choice(STRINGS))
            elif u < 0.5:
                fs[str(f)] = 0.0
            else:
                fs[str(f)] = float(rng.normal() * 10.0 ** rng.integers(-3, 4))
        out[str(ns)] = fs
    return out


def _adf_examples(n, seed, allow_strings=True):
    rng = np.random.default_rng(seed)
    exs = []
    for _ in range(n):
        k = int(rng.integers(1, 6))
        acts = [_features(rng, allow_strings) for _ in range(k)]
        lab = None
        if rng.random() < 0.8:
            lab = CBLabel(int(rng.integers(0, k)), float(-rng.integers(0, 2)), float(rng.uniform(0.01, 1.0)))
        exs.append(ADFExample(_features(rng, allow_strings), acts, lab))
    return exs


def _ccb_examples(n, seed, allow_strings=True):
    rng = np.random.default_rng(seed)
    exs = []
    for _ in range(n):
        k = int(rng.integers(2, 6))
        acts = [_features(rng, allow_strings) for _ in range(k)]
        slots = []
        for _s in range(int(rng.integers(1, min(3, k) + 1))):  # VW needs slots <= actions
            lab = inc = None
            if rng.random() < 0.7:
                chosen = int(rng.integers(0, k))
                if rng.random() < 0.5:
                    lab = CCBOutcome(chosen, float(-rng.integers(0, 2)), ((chosen, float(rng.uniform(0.05, 1))),))
                else:
                    p = rng.dirichlet(np.ones(k))
                    p[-1] = 1.0 - p[:-1].sum()
                    order = [chosen] + [a for a in range(k) if a != chosen]
                    lab = CCBOutcome(chosen, 0.0, tuple((a, float(p[a])) for a in order))
            if rng.random() < 0.3:
                inc = tuple(int(i) for i in sorted(rng.choice(k, size=int(rng.integers(1, k + 1)), replace=False)))
            slots.append(CCBSlot(_features(rng, allow_strings), lab, inc))
        exs.append(CCBExample(_features(rng, allow_strings), acts, slots))
    return exs


def _drop_empty(f):
    return {ns: fs for ns, fs in f.items() if fs}


def _normal_adf(ex):
    return ADFExample(_drop_empty(ex.shared), [_drop_empty(a) for a in ex.actions], ex.label)


def _normal_ccb(ex):
    return CCBExample(_drop_empty(ex.shared), [_drop_empty(a) for a in ex.actions],
                      [CCBSlot(_drop_empty(s.features), s.label, s.include) for s in ex.slots])


# ------------------------------------------------------------------ round trips
def test_adf_write_then_read_is_exact(tmp_path):
    exs = _adf_examples(300, seed=0)
    path = write_vw_adf(tmp_path / "log.vw", exs)
    back = read_vw_adf(path)
    assert back == [_normal_adf(e) for e in exs]
    # and the text of a re-written file is byte-identical
    again = write_vw_adf(tmp_path / "again.vw", back)
    assert again.read_bytes() == path.read_bytes()
    # values are floats (or strings) exactly as written
    vals = [v for e in back for a in e.actions for fs in a.values() for v in fs.values()]
    assert any(isinstance(v, str) for v in vals) and any(v == 0.0 for v in vals if not isinstance(v, str))


def test_ccb_write_then_read_is_exact(tmp_path):
    exs = _ccb_examples(200, seed=1)
    path = write_vw_ccb(tmp_path / "log.vw", exs)
    back = read_vw_ccb(path)
    assert back == [_normal_ccb(e) for e in exs]
    assert write_vw_ccb(tmp_path / "again.vw", back).read_bytes() == path.read_bytes()
    assert any(len(s.label.probabilities) > 1 for e in back for s in e.slots if s.label)
    assert any(s.include for e in back for s in e.slots)


def test_compressed_files_and_line_sources(tmp_path):
    exs = _adf_examples(20, seed=2)
    text = "\n\n".join("\n".join(adf_lines(e)) for e in exs) + "\n"
    gz = tmp_path / "log.vw.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    want = [_normal_adf(e) for e in exs]
    assert read_vw_adf(gz) == want
    assert read_vw_adf(text) == want
    assert read_vw_adf(text.splitlines()) == want


# ------------------------------------------------------------------ VW's documented lines
VW_WIKI_ADF = """shared |User user=Tom time_of_day=morning
|Action article=politics
|Action article=sports
0:-1:0.5 |Action article=music
|Action article=food
"""

VW_CB_ADF_SM = """shared | s_1
0:1.5:0.25 | a:0.5 b:1
| a:-1 b:-0.5
| a:-2 b:-1

shared | s_1
0:-2:0.5 | a:3 b:-1
| a:0.5 b:1
| a:-1 b:-0.5
| a:2 b:-1
"""

VW_CCB_TEST = """ccb shared |User b
ccb action |Action d
ccb action |Action e
ccb action |Action f
ccb action |Action ff
ccb action |Action fff
ccb slot 0:0:0.2 |Slot h
ccb slot 1:0:0.25 |Slot i
ccb slot 2:0:0.333333 |Slot j

ccb shared |User a
ccb action |Action d
ccb action |Action e
ccb action |Action f
ccb action |Action ff
ccb action |Action fff
ccb slot |Slot h
ccb slot |Slot i
ccb slot |Slot j
"""

VW_CCB_WIKI = """ccb shared |User a b c
ccb action |Action d e f
ccb action |Action g h i
ccb action |Action j k l
ccb slot 0:0.8:0.8,1:0.1,2:0.1 0,1,2 | slot_id=1
ccb slot 1:0.5:0.9,2:0.1 1,2 | slot_id=2
"""


def test_vw_documented_adf_lines_are_read():
    (ex,) = read_vw_adf(VW_WIKI_ADF)
    assert ex.shared == {"User": {"user=Tom": 1.0, "time_of_day=morning": 1.0}}
    assert [a["Action"] for a in ex.actions] == [{"article=politics": 1.0}, {"article=sports": 1.0},
                                                 {"article=music": 1.0}, {"article=food": 1.0}]
    assert ex.label == CBLabel(2, -1.0, 0.5)
    a, b = read_vw_adf(VW_CB_ADF_SM)
    assert a.shared == {" ": {"s_1": 1.0}} and a.label == CBLabel(0, 1.5, 0.25)
    assert b.actions[3] == {" ": {"a": 2.0, "b": -1.0}} and b.label == CBLabel(0, -2.0, 0.5)
    assert detect_vw_format(VW_CB_ADF_SM) == "cb_adf" and detect_vw_format(VW_CCB_TEST) == "ccb"
    assert detect_vw_format("1:2:0.4 | a c\n3:0.5:0.2 | b d\n") == "cb"


def test_vw_documented_ccb_lines_are_read():
    lab, unl = read_vw_ccb(VW_CCB_TEST)
    assert len(lab.actions) == 5 and lab.actions[4] == {"Action": {"fff": 1.0}}
    assert [s.label for s in lab.slots] == [CCBOutcome(0, 0.0, ((0, 0.2),)), CCBOutcome(1, 0.0, ((1, 0.25),)),
                                            CCBOutcome(2, 0.0, ((2, 0.333333),))]
    assert all(s.label is None and s.include is None for s in unl.slots)
    (ex,) = read_vw_ccb(VW_CCB_WIKI)
    assert ex.slots[0].label == CCBOutcome(0, 0.8, ((0, 0.8), (1, 0.1), (2, 0.1)))
    assert ex.slots[0].include == (0, 1, 2) and ex.slots[1].include == (1, 2)
    assert ex.slots[1].features == {" ": {"slot_id=2": 1.0}} and ex.slots[1].label.probability == 0.9


def test_namespace_scale_duplicates_tags_and_string_values():
    (ex,) = read_vw_adf("shared 'tag1 |User:0.5 a:4 b a:2 |User c:paris\n'act |A x\n0:0:1 t|A y\n")
    assert ex.shared == {"User": {"a": 3.0, "b": 0.5, "c": "paris"}}
    assert ex.label == CBLabel(1, 0.0, 1.0) and ex.actions == [{"A": {"x": 1.0}}, {"A": {"y": 1.0}}]
    (ex,) = read_vw_adf("|A\n| \n")  # namespaces without features are dropped
    assert ex.actions == [{}, {}]


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("text, line, message", [
    ("shared |u a\n|a x\n0:1 |a y\n", 3, "action:cost:probability"),
    ("shared |u a\n|a x\n0:1:1.5 |a y\n", 3, "(0, 1]"),
    ("shared |u a\n0:1:0.5 |a x\n0:1:0.5 |a y\n", 3, "second labelled"),
    ("|a x\nshared |u a\n", 2, "first line"),
    ("shared |u a\n\n|a x\n", 1, "no action lines"),
    ("shared |u a\n|a x:1abc\n", 2, "neither a number"),
    ("shared |u a\n|a x:inf\n", 2, "neither a number"),
    ("shared |u c:paris c:rome\n|a x\n", 1, "string value"),
    ("shared |u :2\n|a x\n", 1, "no name"),
    ("shared |u:z a\n|a x\n", 1, "scale"),
    ("0:1:0.5 a b c |a x\n", 1, "at most one label"),
    ("ccb shared |u a\n|a x\n", 1, "read_vw_ccb"),
    ("\n\nshared |u a\nfoo\n", 4, "no '|'"),
])
def test_adf_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.vw"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.vw, line {line}: .*{message}" if "(" not in message
                       else rf"bad\.vw, line {line}: "):
        read_vw_adf(path)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        read_vw_adf(path)


@pytest.mark.parametrize("text, line, message", [
    ("ccb shared |u a\nccb action |a x\nccb slot 1:0:0.5 |s\n", 3, "names action 1"),
    ("ccb shared |u a\nccb action |a x\nccb action |a y\nccb slot 0:0:0.5,1:0.4 |s\n", 4, "sum to 1"),
    ("ccb shared |u a\nccb action |a x\nccb slot 0:0:0.5 0:0:0.5 |s\n", 3, "one label"),
    ("ccb shared |u a\nccb action |a x\nccb slot 0,3 |s\n", 3, "beyond"),
    ("ccb shared |u a\nccb action |a x\nccb slot |s\nccb action |a y\n", 4, "after a slot"),
    ("ccb shared |u a\nccb action |a x\nccb banana |s\n", 3, "unknown CCB line"),
    ("ccb shared |u a\nccb action |a x\n", 1, "no slot line"),
    ("ccb shared |u a\nccb action |a x\nccb slot 0:0 |s\n", 3, "action:cost:probability"),
    ("ccb shared |u a\nccb action 1 |a x\nccb slot |s\n", 2, "no cost"),
    ("shared |u a\n|a x\n", 1, "starts with 'ccb"),
])
def test_ccb_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.vw"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.vw, line {line}: .*{message}"):
        read_vw_ccb(path)


def test_writer_refuses_what_vw_text_cannot_carry(tmp_path):
    bad = [
        ADFExample({"u": {"a b": 1.0}}, [{"a": {"x": 1.0}}]),
        ADFExample({"u|v": {"a": 1.0}}, [{"a": {"x": 1.0}}]),
        ADFExample({}, [{"a": {"x": float("nan")}}]),
        ADFExample({}, [{"a": {"x": "1st"}}]),
        ADFExample({}, [{"a": {"x": 1.0}}], CBLabel(1, 0.0, 0.5)),
        ADFExample({}, [{"a": {"x": 1.0}}], CBLabel(0, 0.0, 0.0)),
        ADFExample({}, []),
    ]
    for ex in bad:
        with pytest.raises(ValueError, match="example 0"):
            write_vw_adf(tmp_path / "x.vw", [ex])
    with pytest.raises(ValueError, match="sum to 1"):
        slot = CCBSlot({}, CCBOutcome(0, 0.0, ((0, 0.5), (1, 0.4))))
        write_vw_ccb(tmp_path / "x.vw", [CCBExample({}, [{}, {}], [slot])])


# ------------------------------------------------------------------ interop with vowpalwabbit
def _vw_hashstring(s: str, seed: int) -> int:
    """VW's ``hashstring`` (``--hash strings``): an all-digit name is its number plus the seed, any
    other string its murmurhash3_x86_32 with the seed."""
    import mmh3

    t = s.strip()
    if t and t.isdigit():
        return (int(t) + seed) & 0xFFFFFFFF
    return mmh3.hash(t, seed, signed=False)


def _our_hashed(feats, mask):
    """{(namespace index char, hash): value} the way VW's text parser hashes our feature dicts."""
    out = {}
    for ns, fs in feats.items():
        seed = 0 if ns == " " else _vw_hashstring(ns, 0)
        for f, v in fs.items():
            if isinstance(v, str):
                h, v = _vw_hashstring(v, _vw_hashstring(f, seed)) & mask, 1.0
            else:
                h = _vw_hashstring(f, seed) & mask
            if v != 0:
                key = (ns[0], h)
                out[key] = out.get(key, 0.0) + float(np.float32(v))
    return out


def _vw_hashed(ex):
    out = {}
    for i in range(ex.num_namespaces()):
        ns = ex.get_ns(i)
        if ns.ns == "\x80":  # VW's constant feature
            continue
        for j in range(ex.num_features_in(ns)):
            key = (ns.ns, ex.feature(ns, j))
            out[key] = out.get(key, 0.0) + ex.feature_weight(ns, j)
    return out


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-6, abs=1e-30)


def test_vw_parses_our_adf_files_into_our_features_and_learns_from_them(tmp_path):
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    exs = _adf_examples(60, seed=3)
    path = write_vw_adf(tmp_path / "log.vw", exs)
    ours = read_vw_adf(path)
    vw = pyvw.Workspace("--cb_explore_adf --quiet")
    mask = (1 << 18) - 1
    n_feats = 0
    for ex, lines in zip(ours, (adf_lines(e) for e in exs)):
        parsed = vw.parse(lines)
        shared = [e for e in parsed if e.get_label(pyvw.LabelType.CONTEXTUAL_BANDIT).costs[:1]
                  and e.get_label(pyvw.LabelType.CONTEXTUAL_BANDIT).costs[0].probability == -1.0]
        assert len(shared) == (1 if ex.shared else 0)
        acts = [e for e in parsed if e not in shared]
        assert len(acts) == len(ex.actions)
        if shared:
            _assert_same(_vw_hashed(shared[0]), _our_hashed(ex.shared, mask))
        for a, e in enumerate(acts):
            got = _vw_hashed(e)
            _assert_same(got, _our_hashed(ex.actions[a], mask))
            n_feats += len(got)
            costs = e.get_label(pyvw.LabelType.CONTEXTUAL_BANDIT).costs
            if ex.label is not None and a == ex.label.index:
                assert len(costs) == 1 and costs[0].cost == pytest.approx(ex.label.cost)
                assert costs[0].probability == pytest.approx(ex.label.probability)
            else:
                assert costs == []
        vw.finish_example(parsed)
    vw.finish()
    assert n_feats > 500
    # VW reads the whole file natively and learns from every labelled example
    vw = pyvw.Workspace(f"--cb_explore_adf -d {path} --quiet")
    assert vw.get_weighted_examples() == len(exs)
    vw.finish()


def test_vw_parses_our_ccb_files_and_learns_from_them(tmp_path):
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    exs = _ccb_examples(40, seed=4)
    path = write_vw_ccb(tmp_path / "log.vw", exs)
    ours = read_vw_ccb(path)
    vw = pyvw.Workspace("--ccb_explore_adf --quiet")
    mask = (1 << 18) - 1
    for ex, e in zip(ours, exs):
        parsed = vw.parse(ccb_lines(e))
        assert len(parsed) == 1 + len(ex.actions) + len(ex.slots)
        feats = [ex.shared] + ex.actions + [s.features for s in ex.slots]
        for f, p in zip(feats, parsed):
            _assert_same(_vw_hashed(p), _our_hashed(f, mask))
        for s, p in zip(ex.slots, parsed[1 + len(ex.actions):]):
            lab = p.get_label(pyvw.LabelType.CONDITIONAL_CONTEXTUAL_BANDIT)
            assert (lab.explicit_included_actions or None) == (list(s.include) if s.include else None)
            if s.label is None:
                assert lab.outcome is None
            else:
                assert lab.outcome.cost == pytest.approx(s.label.cost)
                assert [(c.action, pytest.approx(c.score)) for c in lab.outcome.action_probs] == \
                    [(a, pytest.approx(q)) for a, q in s.label.probabilities]
        vw.finish_example(parsed)
    vw.finish()
    vw = pyvw.Workspace(f"--ccb_explore_adf -d {path} --quiet")
    assert vw.get_weighted_examples() > 0
    vw.finish()


def test_vw_learns_from_our_adf_file_what_the_log_says(tmp_path):
    """A cb_adf log whose action 'good' always pays: VW trained on our file prefers it."""
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    rng = np.random.default_rng(5)
    exs = []
    for _ in range(400):
        k = int(rng.integers(2, 5))
        acts = [{"Action": {"id": str(rng.choice(["good", "bad", "meh"]))}} for _ in range(k)]
        i = int(rng.integers(0, k))
        cost = -1.0 if acts[i]["Action"]["id"] == "good" else 0.0
        exs.append(ADFExample({"User": {"u": float(rng.normal())}}, acts, CBLabel(i, cost, 1.0 / k)))
    path = write_vw_adf(tmp_path / "train.vw", exs)
    vw = pyvw.Workspace(f"--cb_explore_adf --epsilon 0.05 -d {path} --quiet")
    test = ADFExample({"User": {"u": 0.3}}, [{"Action": {"id": "bad"}}, {"Action": {"id": "good"}},
                                             {"Action": {"id": "meh"}}])
    probs = vw.predict(adf_lines(test))
    vw.finish()
    assert int(np.argmax(probs)) == 1


def test_we_read_what_vw_reads(tmp_path):
    """VW's own test data parses the same in VW and here (hashed features, labels)."""
    pyvw = pytest.importorskip("vowpalwabbit.pyvw")
    vw = pyvw.Workspace("--cb_explore_adf --quiet")
    for ex, block in zip(read_vw_adf(VW_CB_ADF_SM + "\n" + VW_WIKI_ADF),
                         (VW_CB_ADF_SM + "\n" + VW_WIKI_ADF).strip().split("\n\n")):
        parsed = vw.parse(block.splitlines())
        _assert_same(_vw_hashed(parsed[0]), _our_hashed(ex.shared, (1 << 18) - 1))
        for a, p in enumerate(parsed[1:]):
            _assert_same(_vw_hashed(p), _our_hashed(ex.actions[a], (1 << 18) - 1))
        vw.finish_example(parsed)
    vw.finish()
