"""Vowpal Wabbit's multi-line text formats: action-dependent features (``--cb_adf``,
``--cb_explore_adf``) and conditional contextual bandits with several slots (``--ccb_explore_adf``).

**ADF** [1]_: one example is a block of lines ended by a blank line — an optional ``shared`` line with
the context's features, then one line per candidate action; the chosen action's line carries the
label ``0:cost:probability`` (VW ignores the number before the first colon)::

    shared |User user=Tom time_of_day=morning
    |Action article=politics
    0:-1:0.5 |Action article=sports
    |Action article=music

**CCB** [2]_: ``ccb shared |...``, one ``ccb action |...`` line per action, then one
``ccb slot [chosen:cost:probability[,action:probability...]] [included ids] |...`` line per slot
(the label lists the chosen action — 0-based over the example's action lines — its cost and
probability, optionally followed by the other actions' probabilities; an unlabelled slot has none).

Parsed form (what the readers return and the writers take): features are
``dict[str, dict[str, float | str]]`` — namespace name → {feature name → value}. A bare ``|`` is
VW's default namespace ``" "``; a feature without a value has value 1.0; ``name:value`` with a
number is that number times the namespace's scale (``|ns:0.5``); ``name:text`` with a value that
is not a number is a string feature (VW hashes it as the chain hash of the text and the name) and
stays the string ``"text"`` (it must not start like a number or spell inf/nan). A feature repeated within a namespace is
summed (what VW's linear model does with two copies); a string feature repeated, or mixed with a number of the same
name, cannot be held in a dict and is an error. Namespaces with no features are dropped. Tags (a word
starting with ``'``, or touching the ``|``) are read past and not kept.

Every malformed line raises ``ValueError`` naming the file and line. Files may be gzip/bzip2/xz
compressed. Writing then reading gives back the same examples exactly (floats are written with
``repr``).

.. [1] Vowpal Wabbit wiki, "Contextual Bandit algorithms" / "Input format" (``--cb_adf``).
.. [2] Vowpal Wabbit wiki, "Conditional Contextual Bandit".
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

__all__ = [
    "Features",
    "CBLabel",
    "ADFExample",
    "CCBOutcome",
    "CCBSlot",
    "CCBExample",
    "read_vw_adf",
    "write_vw_adf",
    "read_vw_ccb",
    "write_vw_ccb",
    "adf_lines",
    "ccb_lines",
    "detect_vw_format",
    "read_vw_cb_as_adf",
    "ACTION_NAMESPACE",
]

#: namespace name -> {feature name -> value (a number, or a string feature's text)}
Features = dict[str, dict[str, "float | str"]]
DEFAULT_NAMESPACE = " "

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BAD_NAME_CHARS = frozenset(" \t\r\n|:")


class CBLabel(NamedTuple):
    """The logged choice of an ADF example: ``index`` of the chosen action line (0-based within the
    example), its ``cost`` (VW minimises cost: a click is −1, no click 0) and the logging policy's
    ``probability`` of that choice."""

    index: int
    cost: float
    probability: float


@dataclass
class ADFExample:
    """One ``--cb_adf`` example: shared features, one feature dict per action line, and the label
    (None for an unlabelled example)."""

    shared: Features = field(default_factory=dict)
    actions: list[Features] = field(default_factory=list)
    label: CBLabel | None = None


class CCBOutcome(NamedTuple):
    """A CCB slot's label: the ``action`` chosen for the slot (0-based over the example's actions),
    its ``cost``, and ``probabilities``: (action, probability) pairs, the chosen action first (with
    the probability it was chosen with), optionally followed by the other actions' probabilities."""

    action: int
    cost: float
    probabilities: tuple[tuple[int, float], ...]

    @property
    def probability(self) -> float:
        """The probability of the chosen action."""
        return self.probabilities[0][1]


@dataclass
class CCBSlot:
    """One ``ccb slot`` line: its features, its label (None: unlabelled) and the explicitly included
    action ids (None: every action)."""

    features: Features = field(default_factory=dict)
    label: CCBOutcome | None = None
    include: tuple[int, ...] | None = None


@dataclass
class CCBExample:
    """One ``--ccb_explore_adf`` example: shared features, the actions' features, the slots."""

    shared: Features = field(default_factory=dict)
    actions: list[Features] = field(default_factory=list)
    slots: list[CCBSlot] = field(default_factory=list)


# --------------------------------------------------------------------------- reading
def _source_lines(source) -> tuple[str, Iterator[tuple[int, str]]]:
    """(display name, iterator of (line number, line without its end)) for a path, a string holding
    newlines, or an iterable of lines."""
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and "\n" in source):
        from ._common import display
        from .loaders import _check_file, _open_text

        path = _check_file(source)
        name = display(path)

        def gen() -> Iterator[tuple[int, str]]:
            with _open_text(path) as fh:
                for i, line in enumerate(fh, 1):
                    yield i, line.rstrip("\r\n")

        return name, gen()
    if isinstance(source, str):
        return "<text>", iter(enumerate(source.split("\n"), 1))
    return "<lines>", iter(enumerate((str(s).rstrip("\r\n") for s in source), 1))


def _blocks(source) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """Multi-line examples: runs of non-blank lines separated by blank lines."""
    name, lines = _source_lines(source)
    block: list[tuple[int, str]] = []
    for lineno, line in lines:
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if line.strip():
            block.append((lineno, line))
        elif block:
            yield name, block
            block = []
    if block:
        yield name, block


class _Bad(ValueError):
    pass


def _split_line(line: str) -> tuple[list[str], str]:
    """VW's split of a line into label words (tag removed) and the feature part (from the first '|')."""
    bar = line.find("|")
    head, feats = (line, "") if bar < 0 else (line[:bar], line[bar:])
    tab = head.find("\t")
    if tab >= 0:
        head = head[tab + 1:]
    words = [w for w in head.split(" ") if w]
    if words and (words[-1].startswith("'") or not head.endswith((" ",))):
        words.pop()  # a tag: quoted, or touching the '|' (VW's rule)
    return words, feats


def _ambiguous(text: str) -> bool:
    """A string value VW might read (partly) as a number, or not at all: empty, starting like a
    number, or spelling inf/nan."""
    return not text or text[0] in "+-.0123456789" or text[:3].lower() in ("inf", "nan")


def _number(text: str) -> float | None:
    if _NUMBER.fullmatch(text):
        return float(text)
    return None


def _parse_features(text: str) -> Features:
    """The ``|ns[:scale] f[:v] ...`` part of a line."""
    out: Features = {}
    if not text:
        return out
    for part in text.split("|")[1:]:
        if part[:1] in ("", " ", "\t"):
            ns, scale, toks = DEFAULT_NAMESPACE, 1.0, part.split()
        else:
            toks = part.split()
            ns_tok, toks = toks[0], toks[1:]
            ns, colon, scale_s = ns_tok.partition(":")
            if not ns:
                raise _Bad(f"a namespace name is empty before ':' in {ns_tok!r}")
            scale = 1.0
            if colon:
                s = _number(scale_s)
                if s is None or not math.isfinite(s):
                    raise _Bad(f"the namespace scale {scale_s!r} of {ns!r} is not a finite number")
                scale = s
        feats = out.setdefault(ns, {})
        for tok in toks:
            fname, colon, val = tok.partition(":")
            if not fname:
                raise _Bad(f"the feature {tok!r} has no name (anonymous features are not supported)")
            value: float | str
            if not colon:
                value = scale
            else:
                try:  # float() first (fast); it also takes '1_0', 'inf', 'nan', which VW does not read as numbers
                    v = float(val)
                except ValueError:
                    v = None
                if v is not None and math.isfinite(v) and "_" not in val:
                    value = v * scale
                    if not math.isfinite(value):
                        raise _Bad(f"the value of feature {fname!r} is not finite")
                elif _ambiguous(val) or v is not None:
                    raise _Bad(f"the value {val!r} of feature {fname!r} is neither a number nor a string value")
                else:
                    value = val
            old = feats.get(fname)
            if old is None:
                feats[fname] = value
            elif isinstance(old, str) or isinstance(value, str):
                raise _Bad(f"feature {fname!r} of namespace {ns!r} appears twice with a string value, which a "
                           "feature dict cannot hold")
            else:
                feats[fname] = old + value
    return {ns: f for ns, f in out.items() if f}


def _cb_label(word: str) -> tuple[float, float]:
    parts = word.split(":")
    if len(parts) != 3:
        raise _Bad(f"the label {word!r} is not 'action:cost:probability'")
    if parts[0] and not parts[0].isdigit():
        raise _Bad(f"the label {word!r} does not start with a non-negative action number")
    c, p = _number(parts[1]), _number(parts[2])
    if c is None or p is None:
        raise _Bad(f"the label {word!r} is not 'action:cost:probability' with numbers")
    if not math.isfinite(c):
        raise _Bad(f"the cost in {word!r} is not finite")
    if not 0 < p <= 1:
        raise _Bad(f"the probability in {word!r} must be in (0, 1]")
    return c, p


def _fail(name: str, lineno: int, line: str, msg: str) -> ValueError:
    return ValueError(f"{name}, line {lineno}: {msg} (in {line.strip()[:60]!r}).")


def read_vw_adf(source: str | os.PathLike | Iterable[str]) -> list[ADFExample]:
    """Read VW ``--cb_adf`` text (a path, a string holding newlines, or an iterable of lines).

    >>> exs = read_vw_adf("shared |User a:2 city:paris\\n|Action x\\n0:-1:0.25 |Action y:0.5\\n\\n| z\\n")
    >>> exs[0].shared, exs[0].actions
    ({'User': {'a': 2.0, 'city': 'paris'}}, [{'Action': {'x': 1.0}}, {'Action': {'y': 0.5}}])
    >>> exs[0].label
    CBLabel(index=1, cost=-1.0, probability=0.25)
    >>> exs[1]
    ADFExample(shared={}, actions=[{' ': {'z': 1.0}}], label=None)
    """
    out: list[ADFExample] = []
    name = "<text>"
    for name, block in _blocks(source):
        ex = ADFExample()
        for pos, (lineno, line) in enumerate(block):
            try:
                words, feats = _split_line(line)
                if words[:1] == ["shared"]:
                    if pos != 0:
                        raise _Bad("the 'shared' line must be the first line of an example")
                    if len(words) > 1:
                        raise _Bad("a shared line carries no cost")
                    ex.shared = _parse_features(feats)
                    continue
                if words[:1] == ["ccb"]:
                    raise _Bad("a 'ccb' line in a cb_adf file (read it with read_vw_ccb)")
                if len(words) > 1:
                    raise _Bad("expected at most one label '0:cost:probability' before '|'")
                if words:
                    if ex.label is not None:
                        raise _Bad(f"a second labelled action line in one example (the first is action "
                                   f"{ex.label.index})")
                    c, p = _cb_label(words[0])
                    ex.label = CBLabel(len(ex.actions), c, p)
                if not feats and not words:
                    raise _Bad("no '|' before the features")
                ex.actions.append(_parse_features(feats))
            except _Bad as exc:
                raise _fail(name, lineno, line, str(exc)) from None
        if not ex.actions:
            lineno, line = block[0]
            raise _fail(name, lineno, line, "an example with a shared line and no action lines")
        out.append(ex)
    return out


def _ccb_outcome(word: str, n_actions: int) -> CCBOutcome:
    items = word.split(",")
    first = items[0].split(":")
    if len(first) != 3:
        raise _Bad(f"the slot label {word!r} does not start with 'action:cost:probability'")
    pairs = [(first[0], first[2])] + [tuple(it.split(":")) for it in items[1:]]
    probs: list[tuple[int, float]] = []
    for pair in pairs:
        if len(pair) != 2 or not pair[0].isdigit():
            raise _Bad(f"the slot label {word!r}: after the first item, 'action:probability' pairs are expected")
        a, p = int(pair[0]), _number(pair[1])
        if p is None or not 0 <= p <= 1:
            raise _Bad(f"the slot label {word!r}: probability {pair[1]!r} is not in [0, 1]")
        if a >= n_actions:
            raise _Bad(f"the slot label {word!r} names action {a}; the example has {n_actions} actions")
        probs.append((a, p))
    cost = _number(first[1])
    if cost is None or not math.isfinite(cost):
        raise _Bad(f"the cost {first[1]!r} of the slot label {word!r} is not a finite number")
    if probs[0][1] <= 0:
        raise _Bad(f"the chosen action's probability in {word!r} must be > 0")
    if len(probs) > 1 and abs(math.fsum(p for _, p in probs) - 1.0) > 1e-6:
        raise _Bad(f"the probabilities in {word!r} must sum to 1")
    if len({a for a, _ in probs}) != len(probs):
        raise _Bad(f"the slot label {word!r} names an action twice")
    return CCBOutcome(probs[0][0], cost, tuple(probs))


def read_vw_ccb(source: str | os.PathLike | Iterable[str]) -> list[CCBExample]:
    """Read VW ``--ccb_explore_adf`` text (a path, a string holding newlines, or an iterable of lines).

    >>> exs = read_vw_ccb("ccb shared |User a\\nccb action |Action b\\nccb action |Action c\\n"
    ...                   "ccb slot 1:-1:0.8,0:0.2 0,1 |Slot s\\nccb slot |Slot t\\n")
    >>> slot = exs[0].slots[0]
    >>> slot.features, slot.include
    ({'Slot': {'s': 1.0}}, (0, 1))
    >>> slot.label
    CCBOutcome(action=1, cost=-1.0, probabilities=((1, 0.8), (0, 0.2)))
    >>> exs[0].slots[1].label is None
    True
    """
    out: list[CCBExample] = []
    for name, block in _blocks(source):
        ex = CCBExample()
        for pos, (lineno, line) in enumerate(block):
            try:
                words, feats = _split_line(line)
                if len(words) < 2 or words[0] != "ccb":
                    raise _Bad("a CCB line starts with 'ccb shared', 'ccb action' or 'ccb slot'")
                kind = words[1]
                if kind == "shared":
                    if pos != 0:
                        raise _Bad("the 'ccb shared' line must be the first line of an example")
                    if len(words) > 2:
                        raise _Bad("a shared line carries no cost")
                    ex.shared = _parse_features(feats)
                elif kind == "action":
                    if ex.slots:
                        raise _Bad("an action line after a slot line (actions come before slots)")
                    if len(words) > 2:
                        raise _Bad("an action line carries no cost")
                    ex.actions.append(_parse_features(feats))
                elif kind == "slot":
                    if len(words) > 4:
                        raise _Bad("a slot line holds at most a label and a list of included actions")
                    slot = CCBSlot(_parse_features(feats))
                    for w in words[2:]:
                        if ":" in w:
                            if slot.label is not None:
                                raise _Bad("a slot has one label")
                            slot.label = _ccb_outcome(w, len(ex.actions))
                        else:
                            if slot.include is not None:
                                raise _Bad("a slot has one list of included actions")
                            ids = w.split(",")
                            if not all(i.isdigit() for i in ids):
                                raise _Bad(f"the included actions {w!r} are not comma-separated action ids")
                            inc = tuple(int(i) for i in ids)
                            if any(i >= len(ex.actions) for i in inc):
                                raise _Bad(f"the included actions {w!r} name an action beyond the "
                                           f"{len(ex.actions)} of the example")
                            slot.include = inc
                    ex.slots.append(slot)
                else:
                    raise _Bad(f"unknown CCB line type {kind!r} (shared, action or slot)")
            except _Bad as exc:
                raise _fail(name, lineno, line, str(exc)) from None
        if not ex.slots:
            lineno, line = block[0]
            raise _fail(name, lineno, line, "a CCB example with no slot line")
        out.append(ex)
    return out


# --------------------------------------------------------------------------- writing
def _check_name(what: str, name: object, where: str) -> str:
    if not isinstance(name, str) or not name or any(ch in _BAD_NAME_CHARS for ch in name):
        raise ValueError(f"{where}: the {what} name {name!r} must be a non-empty string without spaces, "
                         "'|' or ':' (VW text cannot carry them).")
    return name


def _fmt_value(v: object, fname: str, where: str) -> str:
    if isinstance(v, str):
        if _ambiguous(v) or any(ch in " \t\r\n|" for ch in v):
            raise ValueError(f"{where}: the string value {v!r} of feature {fname!r} must be non-empty, without "
                             "spaces or '|', and must not start like a number (or inf/nan).")
        return f"{fname}:{v}"
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
        raise ValueError(f"{where}: the value of feature {fname!r} must be a number or a string; got {v!r}.")
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"{where}: the value of feature {fname!r} is not finite ({f!r}).")
    return fname if f == 1.0 else f"{fname}:{f!r}"


def _fmt_features(feats: Features, where: str) -> str:
    if not isinstance(feats, dict):
        raise TypeError(f"{where}: features must be a dict namespace -> {{feature: value}}; got "
                        f"{type(feats).__name__}.")
    parts = []
    for ns, fs in feats.items():
        if not isinstance(fs, dict):
            raise TypeError(f"{where}: namespace {ns!r} must map to a dict {{feature: value}}; got "
                            f"{type(fs).__name__}.")
        if not fs:
            continue
        head = "|" if ns == DEFAULT_NAMESPACE else "|" + _check_name("namespace", ns, where)
        toks = [_fmt_value(v, _check_name("feature", f, where), where) for f, v in fs.items()]
        parts.append(head + " " + " ".join(toks))
    return " ".join(parts) if parts else "|"


def _fmt_cost_prob(cost: float, prob: float, where: str) -> tuple[str, str]:
    c, p = float(cost), float(prob)
    if not math.isfinite(c):
        raise ValueError(f"{where}: the cost must be finite; got {cost!r}.")
    if not 0 < p <= 1:
        raise ValueError(f"{where}: the probability must be in (0, 1]; got {prob!r}.")
    return repr(c), repr(p)


def adf_lines(example: ADFExample, where: str = "example") -> list[str]:
    """The text lines of one ADF example (without the blank line that ends it) — what
    ``pyvw.Workspace.learn`` takes for a multi-line example."""
    lines = []
    if any(example.shared.values()):
        lines.append("shared " + _fmt_features(example.shared, where))
    if not example.actions:
        raise ValueError(f"{where}: an ADF example needs at least one action.")
    lab = example.label
    if lab is not None:
        idx = int(lab.index)
        if not 0 <= idx < len(example.actions):
            raise ValueError(f"{where}: the label's index {lab.index} is not one of the "
                             f"{len(example.actions)} actions.")
        c, p = _fmt_cost_prob(lab.cost, lab.probability, where)
    for a, feats in enumerate(example.actions):
        text = _fmt_features(feats, f"{where}, action {a}")
        lines.append(f"0:{c}:{p} {text}" if lab is not None and a == idx else text)
    return lines


def ccb_lines(example: CCBExample, where: str = "example") -> list[str]:
    """The text lines of one CCB example (without the ending blank line)."""
    n = len(example.actions)
    lines = ["ccb shared " + _fmt_features(example.shared, where)]
    lines += [f"ccb action {_fmt_features(f, f'{where}, action {a}')}" for a, f in enumerate(example.actions)]
    if not example.slots:
        raise ValueError(f"{where}: a CCB example needs at least one slot.")
    for s, slot in enumerate(example.slots):
        w = f"{where}, slot {s}"
        words = ["ccb", "slot"]
        if slot.label is not None:
            lab = slot.label
            probs = list(lab.probabilities) or [(lab.action, float("nan"))]
            if int(probs[0][0]) != int(lab.action):
                raise ValueError(f"{w}: the label's probabilities must start with the chosen action {lab.action}.")
            c, p = _fmt_cost_prob(lab.cost, probs[0][1], w)
            items = [f"{int(lab.action)}:{c}:{p}"]
            for a, q in probs[1:]:
                if not 0 <= float(q) <= 1:
                    raise ValueError(f"{w}: probability {q!r} of action {a} is not in [0, 1].")
                items.append(f"{int(a)}:{float(q)!r}")
            if any(not 0 <= int(a) < n for a, _ in probs):
                raise ValueError(f"{w}: the label names an action outside 0..{n - 1}.")
            if len(probs) > 1 and abs(math.fsum(float(q) for _, q in probs) - 1.0) > 1e-6:
                raise ValueError(f"{w}: the label's probabilities must sum to 1 (VW checks it).")
            words.append(",".join(items))
        if slot.include is not None:
            inc = [int(i) for i in slot.include]
            if not inc or any(not 0 <= i < n for i in inc):
                raise ValueError(f"{w}: the included actions must be a non-empty list of ids in 0..{n - 1}.")
            words.append(",".join(map(str, inc)))
        lines.append(" ".join(words) + " " + _fmt_features(slot.features, w))
    return lines


def _write(path: str | os.PathLike, blocks: Iterable[list[str]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for lines in blocks:
            fh.write("\n".join(lines))
            fh.write("\n\n")
    return path


def write_vw_adf(path: str | os.PathLike, examples: Sequence[ADFExample]) -> Path:
    """Write ADF examples as VW ``--cb_adf`` text (a blank line after each example, floats exact).
    The shared line is left out when the shared features are empty; an action with no features is
    written as a bare ``|``."""
    return _write(path, (adf_lines(ex, f"example {i}") for i, ex in enumerate(examples)))


def write_vw_ccb(path: str | os.PathLike, examples: Sequence[CCBExample]) -> Path:
    """Write CCB examples as VW ``--ccb_explore_adf`` text (a blank line after each example)."""
    return _write(path, (ccb_lines(ex, f"example {i}") for i, ex in enumerate(examples)))


# --------------------------------------------------------------------------- cb lines as ADF
#: the namespace of the one-hot action features that `read_vw_cb_as_adf` gives each action
ACTION_NAMESPACE = "action"


def read_vw_cb_as_adf(source: str | os.PathLike | Iterable[str], n_actions: int | None = None
                      ) -> tuple[list[ADFExample], int]:
    """Read VW ``--cb`` text (one example a line: ``action:cost:probability | features``, actions
    1-based; an unlabelled line ``| features`` is a test example) as ADF examples: the line's features
    shared, and K actions each described by the one feature ``{"action": {"k": 1.0}}`` (k 0-based) —
    so a catalogue learner's context × action interactions are one linear model per action.

    K is ``n_actions`` if given (a larger action in the file is an error), else the largest action in
    the file. Returns ``(examples, K)``.

    >>> exs, K = read_vw_cb_as_adf("2:-1:0.5 |u a\\n| b\\n")
    >>> K, exs[0].label, exs[0].actions[1], exs[1].label is None
    (2, CBLabel(index=1, cost=-1.0, probability=0.5), {'action': {'1': 1.0}}, True)
    """
    name, lines = _source_lines(source)
    rows: list[tuple[Features, CBLabel | None]] = []
    top = 0
    for lineno, line in lines:
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if not line.strip():
            continue
        try:
            words, feats = _split_line(line)
            if words[:1] in (["shared"], ["ccb"]):
                raise _Bad("a multi-line (cb_adf/ccb) line in a cb file")
            if not feats:
                raise _Bad("no '|' before the features")
            if len(words) > 1:
                raise _Bad("expected one label 'action:cost:probability' before '|'")
            label = None
            if words:
                act = words[0].split(":", 1)[0]
                if not act.isdigit() or int(act) < 1:
                    raise _Bad(f"the label {words[0]!r} must start with a 1-based action number")
                c, p = _cb_label(words[0])
                a = int(act)
                if n_actions is not None and a > n_actions:
                    raise _Bad(f"action {a} is beyond the model's {n_actions} actions")
                top = max(top, a)
                label = CBLabel(a - 1, c, p)
            rows.append((_parse_features(feats), label))
        except _Bad as exc:
            raise _fail(name, lineno, line, str(exc)) from None
    if not rows:
        raise ValueError(f"{name}: no examples.")
    K = int(n_actions) if n_actions is not None else top
    if K < 1:
        raise ValueError(f"{name}: no labelled line, so the number of actions is unknown.")
    actions = [{ACTION_NAMESPACE: {str(k): 1.0}} for k in range(K)]
    return [ADFExample(shared, [dict(a) for a in actions], label) for shared, label in rows], K


# --------------------------------------------------------------------------- detection
def detect_vw_format(source: str | os.PathLike | Iterable[str], max_lines: int = 10_000) -> str:
    """``"ccb"``, ``"cb_adf"`` or ``"cb"`` from a VW text file's content: CCB lines start with
    ``ccb``; an ADF file has a ``shared`` line, an unlabelled line or a label with action 0 (VW's
    ``--cb`` labels are 1-based and on every line)."""
    name, lines = _source_lines(source)
    seen = False
    for lineno, line in lines:
        if lineno > max_lines:
            break
        if not line.strip():
            continue
        seen = True
        words, _ = _split_line(line.lstrip("\ufeff"))
        if words[:1] == ["ccb"]:
            return "ccb"
        if words[:1] == ["shared"] or not words:
            return "cb_adf"
        if words[0].split(":", 1)[0] in ("", "0"):
            return "cb_adf"
    if not seen:
        raise ValueError(f"{name}: no examples.")
    return "cb"
