"""What the reader's code returns is the reader's: a right implementation whose result is handed
back in another form (a list, a NumPy array, a tuple around it, the pair the other way round,
another dtype, an extra axis, ...) gets a verdict about that result -- never "a bug in the
checker", whose only cause is the checker's own code."""

from __future__ import annotations

import functools
import inspect

import pytest
import torch
from mistakes import all_correct
from torch import nn

pytestmark = pytest.mark.usefixtures("one_thread")


def _odd(result: object, how: str) -> object:
    """``result`` in another form, or ``None`` where the form does not apply to it."""
    tensor = isinstance(result, torch.Tensor)
    pair = isinstance(result, tuple) and len(result) == 2
    forms = {
        "a list": lambda: result.tolist() if tensor else None,
        "a NumPy array": lambda: result.detach().numpy() if tensor else None,
        "a 1-tuple": lambda: (result,),
        "a pair with None": lambda: (result, None),
        "a dict": lambda: {"out": result},
        "None": lambda: "NONE",
        "a string": lambda: str(result),
        "its first item": lambda: result[0] if isinstance(result, tuple) else None,
        "the pair swapped": lambda: (result[1], result[0]) if pair else None,
        "integers": lambda: result.long() if tensor else None,
        "an extra axis": lambda: result.unsqueeze(0) if tensor else None,
        "one number": lambda: float(result.detach().double().mean()) if tensor else None,
        "NumPy items": lambda: (
            tuple(r.detach().numpy() if isinstance(r, torch.Tensor) else r for r in result)
            if isinstance(result, tuple)
            else None
        ),
    }
    return forms[how]()


FORMS = ["a list", "a NumPy array", "a 1-tuple", "a pair with None", "a dict", "None",
         "a string", "its first item", "the pair swapped", "integers", "an extra axis",
         "one number", "NumPy items"]  # fmt: skip


def _first_correct_per_check():
    seen = {}
    for entry in all_correct():
        seen.setdefault(entry.check.__name__, entry)
    return list(seen.values())


def _returning(code: object, how: str, methods: tuple[str, ...]) -> object:
    """``code`` (a function, or a class: its ``forward`` or the ``methods`` the check calls)
    with its results put in another form."""

    def odd(result: object) -> object:
        form = _odd(result, how)
        return None if form == "NONE" else (result if form is None else form)

    def distorted(method):
        def new(self, *args, **kwargs):
            return odd(method(self, *args, **kwargs))

        new.__signature__ = inspect.signature(method)
        return new

    if isinstance(code, type):
        names = ["forward"] if issubclass(code, nn.Module) else list(methods)
        return type(code.__name__, (code,), {n: distorted(getattr(code, n)) for n in names})

    @functools.wraps(code)
    def wrapped(*args, **kwargs):
        return odd(code(*args, **kwargs))

    return wrapped


CASES = [(entry, how) for entry in _first_correct_per_check() for how in FORMS]


def test_every_check_has_a_right_implementation_to_distort():
    assert len({entry.check.__name__ for entry, _ in CASES}) == 28


@pytest.mark.parametrize(("entry", "how"), CASES,
                         ids=[f"{e.check.__name__}-{h}" for e, h in CASES])  # fmt: skip
def test_an_odd_result_is_never_the_checkers_bug(entry, how, capsys):
    methods = tuple(m.split("(")[0].split(".")[-1] for m in entry.check.spec.methods)
    verdict = entry.check(_returning(entry.code, how, methods))
    assert "bug in the checker" not in verdict.message, (how, verdict.message)
