"""The reader's slip is the reader's: every check, handed the wrong kind of thing or code that
does not take the call the book documents, answers with the call it makes and what the reader's
code takes -- never "a bug in the checker"."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from transformer_tutorial import check
from transformer_tutorial.check.engine import parse

pytestmark = pytest.mark.usefixtures("one_thread")

CHECKS = [getattr(check, name) for name in check.__all__ if name.startswith("check_")]


def params(call: str, rename: bool = False, extra: bool = False) -> str:
    """The parameters of ``call`` as a ``def`` line takes them, a keyword renamed or one more
    required argument if asked."""
    positional, keywords = parse(call)
    names = [f"a{i}" for i in range(positional + extra)]
    names += [f"{k}_renamed=None" if rename and i == 0 else f"{k}=None"
              for i, k in enumerate(keywords)]  # fmt: skip
    return ", ".join(names)


def function_with(signature: str):
    namespace: dict = {}
    exec(f"def my_block({signature}):\n    return (None, None, None)\n", namespace)
    return namespace["my_block"]


def class_with(init: str, forward: str) -> type:
    namespace: dict = {"nn": nn}
    exec(
        "class MyBlock(nn.Module):\n"
        f"    def __init__(self{', ' if init else ''}{init}):\n"
        "        super().__init__()\n"
        f"    def forward(self{', ' if forward else ''}{forward}):\n"
        "        return (None, None, None)\n",
        namespace,
    )
    return namespace["MyBlock"]


class Bare(nn.Module):
    """A subclass with nothing of its own: nn.Module's (*args, **kwargs) must not slip through."""


def wrong_kinds(checker) -> list[tuple[str, object]]:
    spec = checker.spec
    kinds = [
        ("one-argument function", lambda x: x),
        ("bare nn.Module subclass", Bare),
        ("None", None),
        ("instance", nn.Linear(2, 2)),
    ]
    if spec.build is None:
        has_keywords = bool(parse(spec.call)[1])
        kinds += [
            ("class for a function", nn.Linear),
            ("keyword renamed" if has_keywords else "an extra argument",
             function_with(params(spec.call, rename=has_keywords, extra=not has_keywords))),
            ("returns three things", function_with(params(spec.call))),
        ]  # fmt: skip
    else:
        build, build_keywords = params(spec.build), bool(parse(spec.build)[1])
        kinds += [
            ("function for a class", function_with(params(spec.call or "f()"))),
            ("constructor takes other arguments",
             class_with(params(spec.build, rename=build_keywords, extra=not build_keywords),
                        params(spec.call or "f()"))),
            ("forward takes one more", class_with(build, params(spec.call or "f()", extra=True))),
            ("returns three things", class_with(build, params(spec.call or "f()"))),
        ]  # fmt: skip
    return kinds


CASES = [(c, name, code) for c in CHECKS for name, code in wrong_kinds(c)]


def test_every_check_is_tried_with_at_least_five_wrong_kinds():
    assert len(CHECKS) == 28
    for checker in CHECKS:
        assert sum(c is checker for c, _, _ in CASES) >= 5


@pytest.mark.parametrize(("checker", "kind", "code"), CASES,
                         ids=[f"{c.__name__}-{k}" for c, k, _ in CASES])  # fmt: skip
def test_a_slip_is_the_readers_not_the_checkers(checker, kind, code, capsys):
    verdict = checker(code)
    assert capsys.readouterr().out.strip() == str(verdict)
    assert not verdict.ok, (kind, verdict.message)
    assert "bug in the checker" not in verdict.message, verdict.message
    spec = checker.spec
    one_argument = parse(spec.call)[0] == 1 and spec.build is None
    if kind == "one-argument function" and one_argument:
        return  # it takes the call: what it returns is judged
    if kind in ("one-argument function", "None", "class for a function", "keyword renamed",
                "function for a class", "instance", "bare nn.Module subclass"):  # fmt: skip
        said = verdict.message.replace("`", "")
        assert spec.call in said or (spec.build or "@") in said, verdict.message


def test_a_bare_subclass_is_told_to_write_its_constructor(capsys):
    verdict = check.check_feed_forward(Bare)
    assert verdict.message == (
        "the check builds your class as `cls(d_model, d_ff)`, but `Bare` has no __init__ of its "
        "own, and nn.Module's takes no arguments: write `def __init__(self, d_model, d_ff)`."
    ), verdict.message


def test_pytorchs_own_keyword_is_told_with_the_books(capsys):
    def my_pad_sequences(seqs, padding_value=0):
        return torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], True, 0), None

    verdict = check.check_pad_sequences(my_pad_sequences)
    assert verdict.message.startswith(
        "the check calls your function as `fn(seqs, pad_value=0)`, but `my_pad_sequences` takes "
        "(seqs, padding_value=0)"
    ), verdict.message
