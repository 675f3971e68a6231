"""Translator checks: checkpoint averaging (chapter 16)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .engine import check
from .tensors import close
from .verdict import Verdict, Wrong

StateDict = dict[str, Tensor]

# --- checkpoint averaging ---------------------------------------------------------------------

_TIED = ("embed.weight", "generator.weight")  # one tensor under two names, as in a tied model
_COUNTER = "step"  # an integer buffer: a step counter


def _checkpoints(K: int) -> list[StateDict]:
    """``K`` state dicts of one small "run": the weights move from checkpoint to checkpoint, a
    fixed float buffer (``pe``) is the same in all, ``step`` counts, and the embedding is tied to
    the output layer (the two names share one tensor, as ``model.state_dict()`` gives them)."""
    g = torch.Generator().manual_seed(16)
    base = {name: torch.randn(*shape, generator=g) for name, shape in
            (("embed", (5, 4)), ("layer.weight", (3, 4)), ("layer.bias", (3,)))}  # fmt: skip
    pe = torch.randn(6, 4, generator=g)
    states = []
    for i in range(K):
        shift = 0.5 * (i + 1)  # checkpoint i is base + shift, plus noise of its own
        embed = base["embed"] + shift + 0.1 * torch.randn(5, 4, generator=g)
        states.append(
            {
                _TIED[0]: embed,
                "layer.weight": base["layer.weight"] - shift + 0.1 * torch.randn(3, 4, generator=g),
                "layer.bias": base["layer.bias"] + 2 * shift,
                "pe": pe.clone(),
                _COUNTER: torch.tensor(100 * (i + 1)),  # int64
                _TIED[1]: embed,  # the same tensor, not a copy
            }
        )
    return states


def _storages(states: list[StateDict]) -> set[int]:
    return {t.untyped_storage().data_ptr() for s in states for t in s.values()}


def _mean_of(states: list[StateDict], name: str) -> Tensor:
    return torch.stack([s[name].double() for s in states]).mean(0)


def _name_wrong_values(states: list[StateDict], got: Tensor, name: str) -> None:
    """Raise the verdict for a float entry whose values are not the mean: say which look-alike
    of the mean it is."""
    K, g = len(states), got.double()
    total = torch.stack([s[name].double() for s in states]).sum(0)
    looks_like = [
        (total, f"you sum the {K} checkpoints' weights without dividing by K = {K}."),
        (
            states[-1][name].double(),
            f"you return the last checkpoint's weights, not the mean of all {K}.",
        ),
    ]
    if K > 1:
        looks_like += [
            (
                _mean_of(states[1:], name),
                f"you average only the last {K - 1} of the {K} "
                "checkpoints (off by one: the first one is left out).",
            ),
            (
                _mean_of(states[:-1], name),
                f"you average only the first {K - 1} of the {K} "
                "checkpoints (off by one: the newest one is left out).",
            ),
            (total / (K - 1), f"you divide the sum by K - 1 = {K - 1}; divide by K = {K}."),
            (total / (K + 1), f"you divide the sum by K + 1 = {K + 1}; divide by K = {K}."),
            (
                states[0][name].double(),
                f"you return the first checkpoint's weights, not the mean of all {K}.",
            ),
        ]
    for candidate, message in looks_like:
        if close(g, candidate):
            raise Wrong(f"`{name}`: {message}")


def _averaged(fn: Callable, states: list[StateDict]) -> StateDict:
    """The reader's average of ``states``; an integer buffer given to torch.mean, named."""
    try:
        return fn(states)
    except RuntimeError as err:
        if "mean(): could not infer output dtype" in str(err):
            raise Wrong(
                f"`{_COUNTER}` is an integer buffer (a step counter), and torch.mean does not "
                "take integers: average only the floating-point weights, and keep an integer "
                "buffer as the newest checkpoint has it."
            ) from None
        raise


def _expect_inputs_untouched(states: list[StateDict], before: list[StateDict]) -> None:
    """The checkpoints given are left as they were."""
    for s, b in zip(states, before, strict=True):
        if any(not torch.equal(s[k], b[k]) for k in b):
            changed = sorted(k for k in b if not torch.equal(s[k], b[k]))
            raise Wrong(
                f"your function changed the checkpoints it was given, in place ({changed} "
                "of a checkpoint are no longer what was saved): accumulate into new "
                "tensors (sum(...) or torch.stack(...) make them), never into an input."
            )


def _expect_names_and_shapes(got: object, states: list[StateDict]) -> None:
    """A state dict with the checkpoints' names, each a tensor of its shape."""
    if not isinstance(got, dict):
        raise Wrong(f"return a dict name -> tensor (a state dict); got {type(got).__name__}.")
    missing = [k for k in states[-1] if k not in got]
    if missing:
        tied = (" -- the two tied names share one tensor in a checkpoint, and a state dict "
                "needs both") if set(missing) & set(_TIED) else ""  # fmt: skip
        raise Wrong(f"the result lacks {missing}{tied}: load_state_dict would refuse it.")
    extra = [k for k in got if k not in states[-1]]
    if extra:
        raise Wrong(f"the result has names no checkpoint has: {extra}.")
    for name, tensor in got.items():
        if not isinstance(tensor, Tensor):
            raise Wrong(f"`{name}` should be a tensor, got {type(tensor).__name__}.")
        if tensor.shape != states[-1][name].shape:
            raise Wrong(f"`{name}` has shape {tuple(tensor.shape)}, expected "
                        f"{tuple(states[-1][name].shape)}.")  # fmt: skip


def _expect_counter(got: StateDict, states: list[StateDict]) -> None:
    """The integer buffer kept as the newest checkpoint has it."""
    counter = got[_COUNTER]
    if counter.is_floating_point():
        raise Wrong(
            f"`{_COUNTER}`, an integer buffer (a step counter), comes back as "
            f"{counter.dtype}: it was averaged as floats. Keep an integer buffer as the "
            "newest checkpoint has it, in its own dtype."
        )
    if counter.dtype != torch.int64:
        raise Wrong(f"`{_COUNTER}` comes back as {counter.dtype}; it was torch.int64.")
    if not torch.equal(counter, states[-1][_COUNTER]):
        steps = [int(s[_COUNTER]) for s in states]
        raise Wrong(
            f"`{_COUNTER}` is {counter.item()}; the checkpoints were saved at steps {steps}. "
            "An integer buffer (a step counter) is not a weight to average: keep the "
            f"newest checkpoint's, {steps[-1]}."
        )


def _expect_means(got: StateDict, states: list[StateDict], K: int) -> None:
    """Every weight the mean of the checkpoints', in its own dtype; the tied ones too."""
    for name, tensor in got.items():
        if name != _COUNTER and tensor.dtype != states[-1][name].dtype:
            raise Wrong(
                f"`{name}` comes back as {tensor.dtype} from {states[-1][name].dtype} "
                "weights: the average must keep the weights' dtype (a float64 state dict "
                "doubles the checkpoint and changes the model it is loaded into)."
            )
    untied = [k for k in states[-1] if k not in _TIED and k != _COUNTER]
    for name in untied:
        if not close(got[name].double(), _mean_of(states, name)):
            _name_wrong_values(states, got[name], name)
            raise Wrong(f"`{name}` is not the mean of the {K} checkpoints' `{name}`.")
    for name in _TIED:
        if not close(got[name].double(), _mean_of(states, name)):
            _name_wrong_values(states, got[name], name)
            raise Wrong(
                f"the tied weights {list(_TIED)} come out wrong although every other "
                "weight is right. In a checkpoint they are one tensor under two names; "
                "accumulating in place into a copy that keeps them shared (copy.deepcopy "
                "does) adds and divides that tensor once for each name."
            )


def _expect_no_shared_memory(got: StateDict, inputs: set, K: int) -> None:
    """New tensors: nothing shares memory with the inputs."""
    shared = sorted(k for k, t in got.items() if t.untyped_storage().data_ptr() in inputs)
    if shared:
        raise Wrong(
            f"with K = {K}, {shared} of the result share memory with the checkpoints you "
            "were given (a view or the same tensor): training from the average would "
            "change a saved checkpoint. Return new tensors (.clone())."
        )


@check("checkpoint averaging", call="fn(state_dicts)")
def check_average_checkpoints(fn: Callable[[list[StateDict]], StateDict]) -> Verdict:
    """``fn(state_dicts) -> state_dict``: for each name, the mean of that weight over the
    checkpoints, in the weight's own dtype; an integer buffer (a step counter) is not averaged
    but kept as the newest checkpoint has it; the result holds new tensors (sharing no memory
    with the inputs) and the inputs are left as they were."""
    for K in (3, 2, 1):
        states = _checkpoints(K)
        before = [{k: v.clone() for k, v in s.items()} for s in states]
        inputs = _storages(states)
        got = _averaged(fn, states)
        _expect_inputs_untouched(states, before)
        _expect_names_and_shapes(got, states)
        _expect_counter(got, states)
        _expect_means(got, states, K)
        _expect_no_shared_memory(got, inputs, K)
    return (
        "the mean of every weight over K = 3, 2 and 1 checkpoints, in the weights' dtype; "
        "the step counter kept, the inputs untouched, no memory shared with them."
    )
