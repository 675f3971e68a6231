"""The one engine every check runs on.

A check is its probes, declared with the call the book documents::

    @check("scaled dot-product attention", call="fn(q, k, v, mask=None)")
    def check_attention(fn):
        ...  # probe fn; raise a family's mistake (or a difference) when it fails
        return "what was right"

The engine makes sure the reader passed the right kind of thing before any probe runs (a
function or a class, the arguments the call passes, the methods the check calls), runs the
probes, turns whatever they raise into one verdict -- a mistake the reader made, a slip in how
their code is called, their code raising (with its line), or, only when the cause is inside
this package's ``check/``, the checker's own bug -- prints it and returns it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import re
import sysconfig
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from . import hints
from .verdict import Verdict, Wrong, say, translate

MESSAGES = {
    "other-default": "`{name}` defaults to {default}, where the exercise's signature has "
    "{name}={shown}: a call that leaves it out gets another {name}",
    "expects-function-got-class": "the check expects a function, called as `{call}`; you passed "
    "the class `{name}` (pass the function itself).",
    "expects-function-got-other": "the check expects a function, called as `{call}`; you passed "
    "{kind} `{shown}`.",
    "function-signature": "the check calls your function as `{call}`, but `{name}` takes "
    "{signature}: {why}.",
    "expects-class-got-instance": "the check expects the class itself, which it builds as "
    "`{build}`; you passed an instance: pass `{name}`, not `{name}(...)`.",
    "expects-class-got-other": "the check expects a class, which it builds as `{build}` and "
    "calls it as `{call}`; you passed the {kind} `{name}`.",
    "class-signature": "the check builds your class as `{build}`, but `{name}` takes "
    "{signature}: {why}.",
    "no-init": "the check builds your class as `{build}`, but `{name}` has no __init__ of its "
    "own, and nn.Module's takes no arguments: write `def __init__(self, {params})`.",
    "forward-signature": "the check calls your module as `{call}`, but its forward takes "
    "{signature}: {why}.",
    "no-forward": "your class has no forward method: nn.Module calls forward(...).",
    "no-method": "the check calls `{method}` on your object, but `{name}` has no method "
    "`{attribute}`.",
    "method-signature": "the check calls `{method}`, but `{name}.{attribute}` takes "
    "{signature}: {why}.",
    "slip": "the check calls your code as `{call}`, but {why} (your `{name}` takes {signature}).",
    "not-written": "not written yet -- replace `raise NotImplementedError` with your code and run "
    "the cell again.",
    "raised-here": "your code raised {error} {place}: {text}",
    "raised-here-silent": "your code raised {error} {place}.",
    "raised": "your code raised {error}",
    "checker-bug": "this is a bug in the checker, not in your code; please report it with this "
    "message: {error} (in transformer_tutorial/check/{place}).",
    "place-cell": "at line {line} of your cell{shown}",
    "place-file": "at `{file}:{line}`{shown}",
    "with-hint": "{message} -- {hint}",
    "arguments-reordered": "the check calls your code as `{call}`, but `{name}` takes {signature}: "
    "the same arguments in another order, so each would get the value meant for another. Put "
    "them in the order of the call.",
}

# Python's words when a call does not fit the function, or a result not the shape it is used in
_SLIPS = (
    r"unexpected keyword argument|missing \d+ required|takes \d+ positional|takes from \d+|"
    r"got multiple values|positional arguments? but|object is not callable|cannot unpack|"
    r"object is not iterable|object is not subscriptable|values to unpack|has no attribute|"
    r"takes no arguments|object is not an iterator"
)


@dataclass(frozen=True)
class Call:
    """How a check calls the reader's code: ``call`` (a function's call, or a module's forward),
    ``build`` (a class's constructor; None for a function) and the ``methods`` it calls."""

    block: str
    call: str
    build: str | None = None
    methods: tuple[str, ...] = ()

    @property
    def calls(self) -> str:
        """Every call the check makes on what the reader wrote, as the verdicts show them."""
        return ", ".join(c for c in (self.build, self.call, *self.methods) if c)


def check(block: str, call: str, build: str | None = None, methods: tuple[str, ...] = ()):
    """Turn ``probes(code, ...) -> str`` into a check of ``block``: the argument is validated
    against ``call`` (and ``build`` and ``methods`` for a class), the probes run, the verdict is
    printed and returned."""
    spec = Call(block, call, build, methods)

    def decorate(probes: Callable[..., str]) -> Callable[..., Verdict]:
        @functools.wraps(probes)
        def run(code: object, *args, **kwargs) -> Verdict:
            def body() -> str:
                expect(code, spec)
                return probes(code, *args, **kwargs)

            return judge(spec, body, code)

        run.spec = spec  # type: ignore[attr-defined]
        return run

    return decorate


# --- the argument: the right kind of thing, called the way the book calls it ---------------------


def parse(call: str) -> tuple[int, tuple[str, ...]]:
    """``"fn(q, k, v, mask=None)"`` -> 3 positional arguments and the keyword ``mask``."""
    if "(" not in call:
        return 0, ()
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


def shown_signature(fn: Callable, skip_self: bool = False) -> str:
    """``fn``'s parameters as the reader wrote them, without annotations (``"?"`` if unknown)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(?)"
    params = list(signature.parameters.values())[skip_self:]
    params = [p.replace(annotation=inspect.Parameter.empty) for p in params]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def reordered(fn: Callable, call: str, skip_self: bool = False) -> bool:
    """Does ``fn`` name the call's positional arguments, but in another order?"""
    try:
        params = list(inspect.signature(fn).parameters)[skip_self:]
    except (TypeError, ValueError):
        return False
    inside = call[call.index("(") + 1 : call.rindex(")")] if "(" in call else ""
    names = [p.strip() for p in inside.split(",") if p.strip() and "=" not in p]
    if len(names) < 2 or not all(n.isidentifier() for n in names):
        return False
    return sorted(params[: len(names)]) == sorted(names) and params[: len(names)] != names


def cannot_call(
    fn: Callable, call: str, skip_self: bool = False, build: bool = False
) -> str | None:
    """Why ``fn`` cannot be called as ``call`` (None if it can, or if Python cannot tell); a
    call (not a ``build``) also compares the defaults it shows with ``fn``'s."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin: let it be called
        return None
    positional, keywords = parse(call)
    args = range(positional + skip_self)
    try:
        signature.bind(*args, **dict.fromkeys(keywords))
    except TypeError as err:
        return str(err)
    optional = [k for k in keywords if re.search(rf"\b{k}\s*=\s*None\b", call)]
    try:  # an argument the call shows as `=None` is one the book's calls may leave out
        signature.bind(*args, **{k: None for k in keywords if k not in optional})
    except TypeError as err:
        left_out = " and ".join(f"`{k}`" for k in optional)
        return f"{err}; the book's calls leave {left_out} out, so give it the default None"
    return None if build else other_default(signature, call)


def _equal(default: object, documented: object) -> bool:
    try:
        return bool(default == documented)
    except (RuntimeError, TypeError, ValueError):  # a tensor of several values: not comparable
        return True


def other_default(signature: inspect.Signature, call: str) -> str | None:
    """An argument the documented call shows with a default (``length_penalty=0.6``) to which
    the reader's function gives another one: the book's calls that leave it out get another
    value. (A build's ``dropout=0.0`` is what the check passes, not a default: not compared.)"""
    for name, shown in re.findall(r"\b(\w+)\s*=\s*([^,()]+)", call):
        param = signature.parameters.get(name)
        try:
            documented = ast.literal_eval(shown.strip())
        except (ValueError, SyntaxError):
            continue  # a name such as BOS_ID: a value the check passes
        if param is not None and param.default is not inspect.Parameter.empty:
            if documented is not None and not _equal(param.default, documented):
                return say(MESSAGES, "other-default", name=name, default=repr(param.default),
                           shown=shown.strip())  # fmt: skip
    return None


def name_of(thing: object) -> str:
    """A function's or a class's name; an instance's class name; ``None`` as itself."""
    if thing is None:
        return "None"
    return getattr(thing, "__name__", type(thing).__name__)


def expect(code: object, spec: Call) -> None:
    """Raise ``Wrong`` unless ``code`` is what ``spec`` calls, in the way it calls it."""
    if spec.build is None:
        expect_function(code, spec.call)
    else:
        expect_class(code, spec)


def expect_function(fn: object, call: str) -> None:
    if isinstance(fn, type):
        raise Wrong(say(MESSAGES, "expects-function-got-class", call=call, name=fn.__name__))
    if not callable(fn):
        raise Wrong(say(MESSAGES, "expects-function-got-other", call=call,
                        kind=type(fn).__name__, shown=str(fn)[:40]))  # fmt: skip
    why = cannot_call(fn, call)
    if why:
        raise Wrong(say(MESSAGES, "function-signature", call=call, name=name_of(fn),
                        signature=shown_signature(fn), why=why))  # fmt: skip
    if reordered(fn, call):
        raise Wrong(say(MESSAGES, "arguments-reordered", call=call, name=name_of(fn),
                        signature=shown_signature(fn)))  # fmt: skip


def expect_class(cls: object, spec: Call) -> None:
    build, call = spec.build or "", spec.call
    if not isinstance(cls, type):
        if isinstance(cls, torch.nn.Module):
            name = type(cls).__name__
            raise Wrong(say(MESSAGES, "expects-class-got-instance", build=build, name=name))
        raise Wrong(say(MESSAGES, "expects-class-got-other", build=build, call=call or ", ".join(spec.methods),
                        kind=type(cls).__name__, name=name_of(cls)))  # fmt: skip
    positional, keywords = parse(build)
    if cls.__init__ is torch.nn.Module.__init__ and positional + len(keywords) > 0:
        params = build[build.index("(") + 1 : build.rindex(")")]
        raise Wrong(say(MESSAGES, "no-init", build=build, name=cls.__name__, params=params))
    why = cannot_call(cls, build, build=True)
    if why:
        raise Wrong(say(MESSAGES, "class-signature", build=build, name=cls.__name__,
                        signature=shown_signature(cls), why=why))  # fmt: skip
    if issubclass(cls, torch.nn.Module) and call:
        expect_forward(cls, call)
    for method in spec.methods:
        expect_method(cls, method)


def expect_forward(cls: type, call: str) -> None:
    if cls.forward is torch.nn.Module.forward:
        return  # said when the check calls it: "your class has no forward method"
    why = cannot_call(cls.forward, call, skip_self=True)
    if why:
        raise Wrong(say(MESSAGES, "forward-signature", call=call, why=why,
                        signature=shown_signature(cls.forward, skip_self=True)))  # fmt: skip
    if reordered(cls.forward, call, skip_self=True):
        raise Wrong(say(MESSAGES, "arguments-reordered", call=call, name=f"{cls.__name__}.forward",
                        signature=shown_signature(cls.forward, skip_self=True)))  # fmt: skip


def expect_method(cls: type, method: str) -> None:
    """``method`` is ``"cache.append_self(k, v)"``: ``cls`` must have ``append_self`` taking it."""
    attribute = method[: method.index("(")].split(".")[-1]
    found = getattr(cls, attribute, None)
    if not callable(found):
        raise Wrong(say(MESSAGES, "no-method", method=method, name=cls.__name__,
                        attribute=attribute))  # fmt: skip
    why = cannot_call(found, method, skip_self=True)
    if why:
        raise Wrong(say(MESSAGES, "method-signature", method=method, name=cls.__name__,
                        attribute=attribute, why=why,
                        signature=shown_signature(found, skip_self=True)))  # fmt: skip


# --- running the probes: one verdict, whoever raised ---------------------------------------------


def judge(spec: Call, probes: Callable[[], str], code: object = None) -> Verdict:
    """Run ``probes`` and print the verdict: what they return when all is right, the reader's
    mistake, slip or error otherwise."""
    block = translate(spec.block)
    try:
        verdict = Verdict(True, block, translate(probes()))  # what was right: a template too
    except Wrong as wrong:
        verdict = Verdict(False, block, str(wrong), wrong.mistake)
    except NotImplementedError as err:  # the skeleton of a "Your turn" cell, not yet filled in
        key = "no-forward" if 'missing the required "forward"' in str(err) else "not-written"
        verdict = Verdict(False, block, say(MESSAGES, key))
    except Exception as err:  # someone's code raised: say whose and where
        verdict = Verdict(False, block, describe(err, spec, code))
    print(verdict)
    return verdict


_CHECK_DIR = Path(__file__).resolve().parent  # the checker's own code
_PACKAGE_DIR = _CHECK_DIR.parent  # the book's modules, which the reader's code may call
_LIBRARY_DIRS = tuple(
    {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "purelib", "platlib")}
    | {Path(torch.__file__).resolve().parent}
)


def whose(filename: str) -> str:
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


def where(frame: traceback.FrameSummary) -> str:
    """``at `file.py:LINE` (`the line`)``, or the line of a notebook cell."""
    text = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
    shown = f" (`{text}`)" if text else ""
    if re.search(r"ipykernel_\d+|<ipython-input-", frame.filename):
        return say(MESSAGES, "place-cell", line=frame.lineno, shown=shown)
    path = Path(frame.filename)
    try:
        name = str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        name = path.name
    return say(MESSAGES, "place-file", file=name, line=frame.lineno, shown=shown)


_ARITY = r"takes \d+ positional|takes from \d+|missing \d+ required|unexpected keyword|got multiple"


def is_slip(err: BaseException, names: set[str] | None = None) -> bool:
    """Did ``err``, raised by the checker's own line, come from calling the reader's code in a
    way it does not take, or from using what it returned as the book's result (a pair, a
    tensor, a method)? Python's words say so. A call that does not fit must be a call of the
    reader's code (one of ``names`` is in the words): the checker's own wrong call is its
    bug."""
    text = str(err)
    if not (isinstance(err, (TypeError, AttributeError, ValueError)) and re.search(_SLIPS, text)):
        return False
    if names is None or not re.search(_ARITY, text):
        return True
    return any(re.search(rf"\b{re.escape(n)}\(\)", text) for n in names) or "lambda" in text


def library_code_raised(code: object, frames: list, place: traceback.FrameSummary) -> bool:
    """Did the reader pass PyTorch's (or Python's) own code, which raised when the check called
    it? (An ``nn.Linear`` where a function was asked for raises inside PyTorch.)"""
    kind = code if isinstance(code, type) else type(code)
    module = inspect.getmodule(kind)
    if module is None or whose(getattr(module, "__file__", None) or "<frozen>") != "library":
        return False
    below = frames[frames.index(place) + 1 :]
    return bool(below) and all(whose(f.filename) == "library" for f in below)


def describe(err: BaseException, spec: Call, code: object = None) -> str:
    """What the reader reads when code raised: theirs (with the place), a slip in how their code
    fits the call, or -- only when the cause is in ``check/`` -- the checker's own bug."""
    frames = traceback.extract_tb(err.__traceback__)
    first_line = str(err).strip().split("\n")[0]
    error = type(err).__name__ + (f": {first_line}" if first_line else "")
    owners = [whose(f.filename) for f in frames]
    mine = [f for f, o in zip(frames, owners, strict=True) if o in ("reader", "checker")]
    place = mine[-1] if mine else None  # the innermost frame that is the reader's or the checker's
    if place is not None and whose(place.filename) == "checker":
        names = {name_of(code), "__init__", "forward", "__call__"}
        names |= {m.split("(")[0].split(".")[-1] for m in spec.methods}
        if is_slip(err, names) or library_code_raised(code, frames, place):
            called = code.forward if isinstance(code, torch.nn.Module) else code
            signature = shown_signature(called) if callable(called) else "(?)"
            slip = say(MESSAGES, "slip", call=spec.calls, why=error, name=name_of(code),
                       signature=signature)  # fmt: skip
            if re.search(hints.SUPER_INIT, error):
                slip = say(
                    MESSAGES, "with-hint", message=slip, hint=say(hints.MESSAGES, "hint-super-init")
                )
            return slip
        return say(MESSAGES, "checker-bug", error=error,
                   place=f"{Path(place.filename).name}:{place.lineno}")  # fmt: skip
    if place is None:
        return say(MESSAGES, "raised", error=error)
    key = "raised-here" if first_line else "raised-here-silent"
    message = say(MESSAGES, key, error=type(err).__name__, place=where(place), text=first_line)
    text = place.line or linecache.getline(place.filename, place.lineno or 0)
    for hint in hints.for_error(err, text):
        message = say(MESSAGES, "with-hint", message=message, hint=hint)
    return message
