"""The verdict machinery every check shares: run the reader's code, catch what it raises and say
where, compare tensors whatever their dtype, and print one verdict in the book's terms."""

from __future__ import annotations

import inspect
import linecache
import os
import re
import sysconfig
import textwrap
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

POLARITY = "in this book a mask is True where a query *may attend*"

_CHECK_DIR = Path(__file__).resolve().parent  # the checker's own code
_PACKAGE_DIR = _CHECK_DIR.parent  # the book's modules, which the reader's code may call
_LIBRARY_DIRS = tuple(
    {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "purelib", "platlib")}
    | {Path(torch.__file__).resolve().parent}
)


def wrap_verdict(text: str, width: int = 100) -> str:
    """Fold each line longer than ``width`` at spaces, so a verdict fits the book's text column."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
        else:
            lines += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False)
    return "\n".join(lines)


@dataclass
class Verdict:
    """The outcome of one check: ``ok``, the block's name, and what to say to the reader."""

    ok: bool
    block: str
    message: str

    def __str__(self) -> str:
        return wrap_verdict(f"{'✓' if self.ok else '✗'} {self.block}: {self.message}")

    def __bool__(self) -> bool:
        return self.ok


class Wrong(Exception):
    """Raised inside a check with the message for the reader."""


# --- whose code raised, and where ----------------------------------------------------------------


def _whose(filename: str) -> str:
    """``"checker"``, ``"book"`` (the package's taught modules), ``"library"`` (Python, PyTorch)
    or ``"reader"`` for the file of one traceback frame."""
    if filename.startswith("<frozen"):
        return "library"
    path = Path(filename).resolve() if os.path.isabs(filename) else None
    if path is None:
        return "reader"  # "<string>", "<stdin>": code the reader typed in
    if path.is_relative_to(_CHECK_DIR):
        return "checker"
    if path.is_relative_to(_PACKAGE_DIR):
        return "book"
    if any(path.is_relative_to(d) for d in _LIBRARY_DIRS):
        return "library"
    return "reader"


def _where(frame: traceback.FrameSummary) -> str:
    """``at `file.py:LINE` (`the line`)``, or the line of a notebook cell."""
    text = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
    shown = f" (`{text}`)" if text else ""
    if re.search(r"ipykernel_\d+|<ipython-input-", frame.filename):
        return f"at line {frame.lineno} of your cell{shown}"
    path = Path(frame.filename)
    try:
        name = str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        name = path.name
    return f"at `{name}:{frame.lineno}`{shown}"


_HINTS = [
    (
        r"did not match|expected scalar type|same dtype|dtype of|Found dtype",
        "the check calls your code with float64 tensors: make each new tensor with the input's "
        "dtype (torch.zeros_like(x), or dtype=x.dtype), or cast your result at the end.",
    ),
    (
        r"view size is not compatible with input tensor's size and stride",
        "after a transpose the tensor is not contiguous, so view cannot merge its axes: use "
        ".reshape(...) (or .contiguous().view(...)).",
    ),
]


def _describe(err: BaseException) -> str:
    """What the reader reads when code raised: theirs (with the place) or the checker's own."""
    frames = traceback.extract_tb(err.__traceback__)
    first_line = str(err).strip().split("\n")[0]
    what = type(err).__name__ + (f": {first_line}" if first_line else "")
    owner, place = "reader", None
    for frame in reversed(frames):  # the innermost frame that is the reader's or the checker's
        kind = _whose(frame.filename)
        if kind in ("reader", "checker"):
            owner, place = kind, frame
            break
    if owner == "checker":
        where = f"{Path(place.filename).name}:{place.lineno}"
        return (
            "this is a bug in the checker, not in your code; please report it with this "
            f"message: {what} (in transformer_tutorial/check/{where})."
        )
    if place is None:
        return f"your code raised {what}"
    message = f"your code raised {type(err).__name__} {_where(place)}"
    message += f": {first_line}" if first_line else "."
    for pattern, hint in _HINTS:
        if re.search(pattern, str(err)):
            message += f" -- {hint}"
    return message


def _run(block: str, probes: Callable[[], str]) -> Verdict:
    try:
        verdict = Verdict(True, block, probes())
    except Wrong as wrong:
        verdict = Verdict(False, block, str(wrong))
    except NotImplementedError as err:  # the skeleton of a "Your turn" cell, not yet filled in
        if 'missing the required "forward"' in str(err):
            message = "your class has no forward method: nn.Module calls forward(...)."
        else:
            message = (
                "not written yet -- replace `raise NotImplementedError` with your code and run "
                "the cell again."
            )
        verdict = Verdict(False, block, message)
    except Exception as err:  # someone's code raised: say whose and where
        verdict = Verdict(False, block, _describe(err))
    print(verdict)
    return verdict


# --- what kind of thing the check expects ----------------------------------------------------


def _parse(call: str) -> tuple[int, tuple[str, ...]]:
    """``"fn(q, k, v, mask=None)"`` -> 3 positional arguments and the keyword ``mask``."""
    inside = call[call.index("(") + 1 : call.rindex(")")]
    params, depth, current = [], 0, ""
    for char in inside + ",":  # split at the commas outside brackets: "x, (h, c)" is two
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            params.append(current.strip())
            current = ""
        else:
            current += char
    params = [p for p in params if p]
    keywords = tuple(p.split("=")[0].strip() for p in params if "=" in p)
    return len(params) - len(keywords), keywords


def _cannot_call(fn: Callable, call: str, skip_self: bool = False) -> str | None:
    """Why ``fn`` cannot be called as ``call`` (None if it can, or if Python cannot tell)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin: let it be called
        return None
    positional, keywords = _parse(call)
    try:
        signature.bind(*range(positional + skip_self), **dict.fromkeys(keywords))
    except TypeError as err:
        params = list(signature.parameters.values())[skip_self:]
        shown = signature.replace(parameters=params, return_annotation=inspect.Signature.empty)
        return f"{_strip_annotations(shown)}: {err}"
    return None


def _strip_annotations(signature: inspect.Signature) -> str:
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=params))


def _name(thing: object) -> str:
    return getattr(thing, "__name__", type(thing).__name__)


def _expect_function(fn: object, call: str) -> None:
    """Raise ``Wrong`` unless ``fn`` is a function the check can call as ``call``."""
    if isinstance(fn, type):
        raise Wrong(f"the check expects a function, called as `{call}`; you passed the class "
                    f"`{fn.__name__}` (pass the function itself).")  # fmt: skip
    if not callable(fn):
        raise Wrong(f"the check expects a function, called as `{call}`; you passed "
                    f"{type(fn).__name__} `{str(fn)[:40]}`.")  # fmt: skip
    why = _cannot_call(fn, call)
    if why:
        raise Wrong(f"the check calls your function as `{call}`, but `{_name(fn)}` takes {why}.")


def _expect_class(cls: object, build: str, call: str | None = None) -> None:
    """Raise ``Wrong`` unless ``cls`` is a class the check can build as ``build`` and whose
    instances it can call as ``call``."""
    if not isinstance(cls, type):
        if isinstance(cls, torch.nn.Module):
            kind = type(cls).__name__
            raise Wrong(f"the check expects the class itself, which it builds as `{build}`; you "
                        f"passed an instance: pass `{kind}`, not `{kind}(...)`.")  # fmt: skip
        raise Wrong(f"the check expects a class, which it builds as `{build}` and calls as "
                    f"`{call or '...'}`; you passed the {type(cls).__name__} "
                    f"`{_name(cls)}`.")  # fmt: skip
    why = _cannot_call(cls, build)
    if why:
        raise Wrong(f"the check builds your class as `{build}`, but `{cls.__name__}` takes "
                    f"{why}.")  # fmt: skip
    if call is not None and issubclass(cls, torch.nn.Module):
        forward = cls.forward  # (none at all is said when the check calls it)
        why = forward is not torch.nn.Module.forward and _cannot_call(forward, call, True)
        if why:
            raise Wrong(f"the check calls your module as `{call}`, but its forward takes "
                        f"{why}.")  # fmt: skip


# --- comparing tensors ----------------------------------------------------------------------------

# The tolerance a result of each dtype can be held to: its rounding, a few operations deep.
# float64's is the default for every check (a check may ask for a tighter one); a float32 result
# that a check casts to float64 itself still meets it.
_TOLERANCE = {
    torch.float64: 1e-5,
    torch.float32: 1e-4,
    torch.float16: 5e-3,
    torch.bfloat16: 3e-2,
}


def _tolerance(t: Tensor) -> float:
    return _TOLERANCE.get(t.dtype, _TOLERANCE[torch.float64])


def _close(a: Tensor, b: Tensor, tol: float | None = None) -> bool:
    """Same shape and the same values, compared in float64 to ``tol`` (default 1e-5), loosened
    to the precision of the coarser dtype when a result is float32, float16 or bfloat16."""
    if a.shape != b.shape:
        return False
    floor = max(0.0 if t.dtype == torch.float64 else _tolerance(t) for t in (a, b))
    limit = max(_TOLERANCE[torch.float64] if tol is None else tol, floor)
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    return bool(torch.allclose(a64, b64, atol=limit, rtol=limit, equal_nan=False))


def _tensor(result: object, what: str, shape: tuple) -> Tensor:
    if not isinstance(result, Tensor):
        raise Wrong(f"{what} should be a tensor of shape {shape}, got {type(result).__name__}.")
    if tuple(result.shape) != tuple(shape):
        raise Wrong(f"{what} has shape {tuple(result.shape)}, expected {tuple(shape)}.")
    return result


def _backward(result: Tensor, what: str = "your result") -> None:
    """``result.backward()``, or a sentence when no gradient can flow back through it."""
    if not result.requires_grad:
        raise Wrong(f"no gradient flows back through {what}: did you detach() something, or "
                    "build a new tensor from plain numbers (torch.tensor(...), .item())?")  # fmt: skip
    result.backward()


def _random(*shape: int, seed: int = 0) -> Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _with_weights_of(mine: torch.nn.Module, reference: torch.nn.Module, names: tuple) -> None:
    """Copy the reader's weights into the reference, once each named layer is there, of the
    book's kind and size; a dotted name reaches into a submodule (``self_attn.q_proj``)."""
    if not isinstance(mine, torch.nn.Module):
        raise Wrong(f"your class should be an nn.Module (class My...(nn.Module)); it builds "
                    f"{type(mine).__name__}.")  # fmt: skip
    for name in names:
        ours = reference.get_submodule(name)
        try:
            theirs = mine.get_submodule(name)
        except AttributeError:
            theirs = None
        kind = type(ours).__name__
        kind = "a linear layer" if kind == "Linear" else f"an nn.{kind}"
        if not isinstance(theirs, type(ours)):
            raise Wrong(f"the module needs {kind} `{name}`, as in the book.")
        sizes = [{k: tuple(t.shape) for k, t in m.state_dict().items()} for m in (theirs, ours)]
        if sizes[0] != sizes[1]:
            raise Wrong(f"`{name}` holds {sizes[0]}; the book's holds {sizes[1]}.")
    reference.load_state_dict(mine.state_dict(), strict=False)
