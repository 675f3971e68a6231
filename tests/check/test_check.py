"""The checker's machinery is itself checked: what the reader sees (one printed verdict), where
their code failed, what the check expected when it was handed the wrong kind of thing, results
in other dtypes, and the checker's own errors told apart from the reader's. The mistakes each
check names are in the catalogue, tests/check/mistakes/ (run by tests/check/test_catalogue.py)."""

from __future__ import annotations

import inspect
import linecache
from pathlib import Path

import pytest
import torch

from transformer_tutorial import check
from transformer_tutorial.attention import attention, masked_softmax
from transformer_tutorial.check import engine, hints, tensors
from transformer_tutorial.check import verdict as machinery
from transformer_tutorial.feedforward import PositionwiseFeedForward

# Tiny tensors: one thread is as fast, and immune to a busy machine (see conftest.py).
pytestmark = pytest.mark.usefixtures("one_thread")


def verdict_of(checker, fn, capsys):
    verdict = checker(fn)
    printed = capsys.readouterr().out
    assert printed.strip() == str(verdict)  # the reader sees exactly the verdict
    return verdict


def line_of(fn, text: str) -> int:
    """The line number of the first line of ``fn``'s source that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


# --- what the reader sees ---------------------------------------------------------------------


def test_a_verdict_is_printed_once_and_fits_the_page(capsys):
    verdict = verdict_of(check.check_attention, attention, capsys)
    assert verdict.ok and bool(verdict) and str(verdict).startswith("✓ scaled dot-product")
    long = machinery.Verdict(False, "block", "word " * 60)
    assert all(len(line) <= 100 for line in str(long).split("\n"))


def test_an_unwritten_skeleton_is_told_to_fill_it_in(capsys):
    def my_attention(q, k, v, mask=None):
        raise NotImplementedError

    class MyFeedForward(torch.nn.Module):
        def __init__(self, d_model, d_ff):
            super().__init__()
            raise NotImplementedError

    for checker, implementation in [
        (check.check_attention, my_attention),
        (check.check_feed_forward, MyFeedForward),
    ]:
        verdict = verdict_of(checker, implementation, capsys)
        assert not verdict.ok
        assert "not written yet" in verdict.message
        assert "raise NotImplementedError" in verdict.message


def test_a_module_without_forward_is_told_so(capsys):
    class NoForward(torch.nn.Module):
        def __init__(self, d_model, d_ff):
            super().__init__()
            self.linear1 = torch.nn.Linear(d_model, d_ff)
            self.linear2 = torch.nn.Linear(d_ff, d_model)

    verdict = verdict_of(check.check_feed_forward, NoForward, capsys)
    assert not verdict.ok and "has no forward method" in verdict.message, verdict.message


# --- where the reader's code failed -------------------------------------------------------------


def test_code_that_raises_is_reported_with_its_file_and_line(capsys):
    def broken(scores, mask):
        raise IndexError("dimension out of range")

    verdict = verdict_of(check.check_masked_softmax, broken, capsys)
    line = line_of(broken, "raise IndexError")
    assert not verdict.ok
    assert verdict.message == (
        f"your code raised IndexError at `tests/check/test_check.py:{line}` "
        '(`raise IndexError("dimension out of range")`): dimension out of range'
    ), verdict.message


def test_an_empty_assert_shows_its_line(tmp_path, capsys):
    source = "def my_layer_norm(x):\n    B, T, D = x.shape\n    assert D % 2 == 1\n    return x\n"
    path = tmp_path / "my_norm.py"  # a reader's file (pytest rewrites the asserts of its own)
    path.write_text(source)
    namespace = {}
    exec(compile(source, str(path), "exec"), namespace)
    verdict = verdict_of(check.check_layer_norm, namespace["my_layer_norm"], capsys)
    assert verdict.message == (
        "your code raised AssertionError at `my_norm.py:3` (`assert D % 2 == 1`)."
    ), verdict.message


def test_the_place_is_the_readers_last_frame_not_pytorchs(capsys):
    def my_attention(q, k, v, mask=None):
        scores = q @ k  # k not transposed: (.., T_k, d_k) cannot multiply (.., T_q, d_k)
        return scores, scores

    verdict = verdict_of(check.check_attention, my_attention, capsys)
    line = line_of(my_attention, "scores = q @ k")
    assert f"RuntimeError at `tests/check/test_check.py:{line}` (`scores = q @ k" in verdict.message


def test_a_notebook_cell_is_named_as_a_cell(capsys):
    filename = "/tmp/ipykernel_4242/1234567.py"  # how Jupyter names a cell's code
    source = "def my_causal_mask(T):\n    return torch.ones(T, T).tril().bool()[T]\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch}
    exec(compile(source, filename, "exec"), namespace)
    verdict = verdict_of(check.check_causal_mask, namespace["my_causal_mask"], capsys)
    assert "IndexError at line 2 of your cell (`return torch.ones(T, T).tril().bool()[T]`)" in (
        verdict.message
    ), verdict.message


def test_float32_tensors_in_float64_code_get_a_hint(capsys):
    class MixesDtypes(PositionwiseFeedForward):
        def forward(self, x):
            h = torch.zeros(*x.shape[:-1], self.linear1.out_features)  # float32
            h[:] = torch.relu(self.linear1(x))
            return self.linear2(h)

    verdict = verdict_of(check.check_feed_forward, MixesDtypes, capsys)
    assert "RuntimeError at `tests/check/test_check.py:" in verdict.message, verdict.message
    assert "the check calls your code with float64 tensors" in verdict.message


# The commonest errors PyTorch raises in a reader's line, and the hint each gets (hint-dtype, -view,
# -none, -broadcast and -tuple have their own tests above and in test_wrong_kinds.py).
_RAISED = {
    "hint-truth": "if torch.ones(3) > 0: pass",
    "hint-bool-mask": "~torch.ones(3)",
    "hint-in-place": "torch.ones(3, requires_grad=True).masked_fill_(torch.ones(3).bool(), 0)",
    "hint-matmul": "torch.nn.Linear(4, 3)(torch.ones(2, 6))",
    "hint-cross-entropy": "F.cross_entropy(torch.randn(3, 5, 10), torch.zeros(3, 5).long())",
    "hint-bool-index": "torch.ones(2, 3, 4)[torch.ones(2, 4).bool()] = 0.0",
    "hint-reshape-size": "torch.ones(2, 3, 4).view(2, 5, -1)",
    "hint-join": "torch.cat([torch.ones(2, 3), torch.ones(3, 3)], dim=1)",
    "hint-dim-range": "torch.ones(2, 3).softmax(2)",
    "hint-index-range": "torch.nn.Embedding(5, 2)(torch.tensor([7]))",
    "hint-cast": "torch.zeros(3).long().__iadd__(torch.ones(3) * 0.5)",
    "hint-one-element": "float(torch.ones(3))",
    "hint-index-dtype": "torch.ones(3)[torch.tensor(1.0)]",
    "hint-channels": "torch.nn.Conv2d(3, 8, 4, 4)(torch.ones(1, 8, 8, 3))",
    "hint-broadcast": "torch.ones(3, 1).expand(4, 5)",
}


@pytest.mark.parametrize("hint", sorted(_RAISED))
def test_what_pytorch_raises_in_the_readers_line_gets_its_hint(hint):
    namespace = {"torch": torch, "F": torch.nn.functional}
    source = f"def mine(x):\n    {_RAISED[hint]}\n"
    exec(compile(source, "<ipython-input-7-mine>", "exec"), namespace)
    with pytest.raises(Exception) as raised:
        namespace["mine"](None)
    message = engine.describe(raised.value, engine.Call("block", "mine(x)"), namespace["mine"])
    assert message.startswith(f"your code raised {type(raised.value).__name__} at line 2"), message
    assert message.endswith(hints.MESSAGES[hint]), message
    assert message.count(" -- ") == 1, message  # one hint, the right one


# --- the checker's own errors are its own ----------------------------------------------------------


def checker_code(source: str):
    """A function whose code lives, for Python's tracebacks, in the checker's own folder."""
    namespace = {"torch": torch}
    filename = str(Path(machinery.__file__).with_name("probe_for_the_test.py"))
    exec(compile(source, filename, "exec"), namespace)
    return namespace["probes"]


@pytest.mark.parametrize(
    "source",
    [
        "def probes():\n    raise KeyError('a name the checker forgot')\n",
        "def probes():\n    return torch.allclose(torch.zeros(2), torch.zeros(2).double())\n",
        "def helper(a):\n    return a\ndef probes():\n    return helper(1, 2)\n",
    ],
    ids=["raised-by-the-checker", "raised-by-pytorch-for-the-checker", "checker-calls-its-own"],
)
def test_an_error_in_the_checker_is_not_blamed_on_the_reader(source, capsys):
    verdict = engine.judge(engine.Call("block", "fn()"), checker_code(source))
    assert capsys.readouterr().out.strip() == str(verdict)
    assert not verdict.ok
    assert verdict.message.startswith("this is a bug in the checker, not in your code; please "
                                      "report it"), verdict.message  # fmt: skip
    assert "probe_for_the_test.py:" in verdict.message
    assert "your code raised" not in verdict.message


def test_the_reader_calling_the_books_code_wrongly_is_the_readers_error(capsys):
    def my_attention(q, k, v, mask=None):
        return attention(q, k.transpose(-2, -1), v, mask)  # the book's function raises

    verdict = verdict_of(check.check_attention, my_attention, capsys)
    line = line_of(my_attention, "return attention(")
    assert f"your code raised ValueError at `tests/check/test_check.py:{line}`" in verdict.message


# --- the wrong kind of thing -----------------------------------------------------------------------


def test_a_class_where_a_function_is_expected(capsys):
    verdict = verdict_of(check.check_masked_softmax, PositionwiseFeedForward, capsys)
    assert verdict.message == (
        "the check expects a function, called as `fn(scores, mask)`; you passed the class "
        "`PositionwiseFeedForward` (pass the function itself)."
    )


def test_a_function_where_a_class_is_expected(capsys):
    verdict = verdict_of(check.check_feed_forward, attention, capsys)
    assert "the check expects a class, which it builds as `cls(d_model, d_ff)`" in (
        verdict.message
    ), verdict.message


def test_an_instance_where_a_class_is_expected(capsys):
    verdict = verdict_of(check.check_feed_forward, PositionwiseFeedForward(8, 32), capsys)
    assert "pass `PositionwiseFeedForward`, not `PositionwiseFeedForward(...)`" in (
        verdict.message
    ), verdict.message


def test_a_function_of_the_wrong_arity(capsys):
    def my_masked_softmax(scores):
        return torch.softmax(scores, -1)

    verdict = verdict_of(check.check_masked_softmax, my_masked_softmax, capsys)
    assert verdict.message == (
        "the check calls your function as `fn(scores, mask)`, but `my_masked_softmax` takes "
        "(scores): too many positional arguments."
    ), verdict.message


def test_an_argument_the_call_may_leave_out_needs_its_default(capsys):
    def my_attention(q, k, v, mask):  # `mask=None` in the book: a call without a mask is allowed
        return attention(q, k, v, mask)

    verdict = verdict_of(check.check_attention, my_attention, capsys)
    assert verdict.message == (
        "the check calls your function as `fn(q, k, v, mask=None)`, but `my_attention` takes "
        "(q, k, v, mask): missing a required argument: 'mask'; the book's calls leave `mask` out, "
        "so give it the default None."
    ), verdict.message


def test_a_class_whose_constructor_takes_other_arguments(capsys):
    class MyFeedForward(PositionwiseFeedForward):
        def __init__(self, d_model, d_ff, activation):
            super().__init__(d_model, d_ff)

    verdict = verdict_of(check.check_feed_forward, MyFeedForward, capsys)
    assert "builds your class as `cls(d_model, d_ff)`, but `MyFeedForward` takes (d_model, " \
        "d_ff, activation)" in verdict.message, verdict.message  # fmt: skip


# --- dtypes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_results_are_judged_on_their_maths_and_then_on_their_dtype(dtype, capsys):
    def my_masked_softmax(scores, mask):
        return masked_softmax(scores.to(dtype), mask)

    def my_attention(q, k, v, mask=None):
        return attention(q.to(dtype), k.to(dtype), v.to(dtype), mask)

    for checker, fn in [
        (check.check_masked_softmax, my_masked_softmax),
        (check.check_attention, my_attention),
        # (LayerNorm's input has a position whose features differ by 1e-3: bfloat16 would
        # round them away, so here the result is cast, not the input)
        (check.check_layer_norm, lambda x: torch.nn.functional.layer_norm(x, (8,)).to(dtype)),
    ]:
        verdict = verdict_of(checker, fn, capsys)
        if dtype == torch.float64:
            assert verdict.ok, verdict.message
        else:  # right to its own precision, but lower than the float64 inputs
            assert verdict.mistake == "dtype-lowered", (dtype, verdict.message)
    # the table has no input to take a dtype from: chapter 10's exercise asks for float32
    table = lambda n, d: check.layers._table(n, d).to(dtype)  # noqa: E731
    verdict = verdict_of(check.check_sinusoidal_encoding, table, capsys)
    if dtype == torch.float32:
        assert verdict.ok, verdict.message
    else:
        assert verdict.mistake == "table-not-float32", (dtype, verdict.message)


def test_a_float32_result_still_has_its_mistake_named(capsys):
    def my_attention(q, k, v, mask=None):  # float32, and not scaled
        return attention(q.float(), k.float(), v.float(), mask, scale=1.0)

    verdict = verdict_of(check.check_attention, my_attention, capsys)
    assert "without the division by sqrt(d_k)" in verdict.message, verdict.message


def test_tolerance_follows_the_coarser_dtype():
    a = torch.tensor([1.0], dtype=torch.float64)
    assert not tensors.close(a, a + 1e-4)  # float64 is held to 1e-5 by default
    assert not tensors.close(a, a + 1e-8, tol=1e-10)  # or what a check asks
    assert tensors.close(a.float(), a + 1e-5, tol=1e-10)  # float32 to 1e-4 at least
    assert not tensors.close(a.float(), a + 1e-3)
    assert tensors.close(a.bfloat16(), a + 1e-2)
    assert not tensors.close(a, torch.ones(2, dtype=torch.float64))  # shapes differ


# The mistakes of greedy search, beam search and the key/value cache are in
# tests/check/mistakes/decoding.py. The beam search check names a mistake by the search that gives the
# reader's outputs: without a mistake it is the book's search, and no two mistakes look alike.


def test_beam_search_mistakes_are_told_apart_by_the_probes():
    from transformer_tutorial.check import beam_search as b
    from transformer_tutorial.check import decoding as d
    from transformer_tutorial.decoding import beam_search

    outputs = {m: [] for m in [None, *b._BEAM_MISTAKES, *b._ALIASES]}
    cases = d.decoding_cases()
    for c, K, alpha in d.BEAM_PROBES:
        case = cases[c]
        variants = b._beam_variants(case, K, alpha, list(outputs))
        for m in outputs:
            outputs[m].append(variants[m])
        book = beam_search(case.model, case.src, K, case.max_len, bos_id=d.BOS_ID,
                           eos_id=case.eos, length_penalty=alpha)  # fmt: skip
        assert variants[None] == d.sentences(book, len(case.src), case.pad)
    first = {}  # each output and the first search that gives it
    for m, out in outputs.items():
        same = first.setdefault(repr(out), m)
        assert m is None or same is not None, f"{m} gives the right output on every probe"
        assert same == m or b._ALIASES.get(m) == same, f"{m} and {same} look alike"


@pytest.mark.parametrize(
    ("got", "want", "words"),
    [
        ((3, 1, 8), (1, 3, 8), "axes 0 and 1 swapped"),
        ((4, 2, 3), (2, 3, 4), "the same sizes in another order"),
        ((49, 16), (50, 16), "axis 0 holds 49 entries where 50 belong, one too few"),
        ((2, 6), (2, 5), "axis 1 holds 6 entries where 5 belong, one too many"),
        ((2, 2, 5), (2, 1, 5), "axis 1 holds 2 entries where it should have size 1"),
        ((2, 5, 1, 3), (2, 5, 3), "an extra axis of size 1 at position 2"),
        ((4, 9), (4,), "an extra axis of size 9 at position 1"),
        ((2, 5, 6), (2, 5, 3), None),
    ],
)
def test_a_wrong_shape_says_what_its_sizes_tell(got, want, words):
    with pytest.raises(Exception) as raised:
        tensors.expect_tensor(torch.zeros(got), "out", want)
    message = str(raised.value)
    assert message.startswith(f"out has shape {got}, expected {want}"), message
    assert (words in message) if words else message.endswith(f"expected {want}."), message
