"""Translator checks: checkpoint averaging (chapter 16)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from .engine import check
from .tensors import close
from .verdict import Verdict, Wrong, say

StateDict = dict[str, Tensor]

# --- checkpoint averaging ---------------------------------------------------------------------

_TIED = ("embed.weight", "generator.weight")  # one tensor under two names, as in a tied model
_COUNTER = "step"  # an integer buffer: a step counter

MISTAKES = {
    "average-floor-division": "`{name}` is the mean rounded down: the sum is divided with // "
    "(floor division), which floors every value. Divide with /: total / K.",
    "average-mean-without-dim": "`{name}` is one number, the mean of all its entries over all "
    "the checkpoints: torch.mean of the stacked tensors without dim averages everything. Average "
    "over the checkpoints' axis only: torch.stack(...).mean(dim=0).",
    "average-weights": "`{name}` is a weighted sum of the {K} checkpoints with the weights "
    "{weights} (oldest first); the mean gives each 1/{K} = {share:.3f}.{which}",
    "average-sum-without-dividing": "`{name}`: you sum the {K} checkpoints' weights without "
    "dividing by K = {K}.",
    "average-last-only": "`{name}`: you return the last checkpoint's weights, not the mean of "
    "all {K}.",
    "average-off-by-one-first-left-out": "`{name}`: you average only the last {K_1} of the {K} "
    "checkpoints (off by one: the first one is left out).",
    "average-divides-by-k-minus-1": "`{name}`: you divide the sum by K - 1 = {K_1}; divide by "
    "K = {K}.",
    "average-torch-mean-on-integers": "`{counter}` is an integer buffer (a step counter), and "
    "torch.mean does not take integers: average only the floating-point weights, and keep an "
    "integer buffer as the newest checkpoint has it.",
    "average-mutates-its-inputs": "your function changed the checkpoints it was given, in "
    "place ({changed} of a checkpoint are no longer what was saved): accumulate into new "
    "tensors (sum(...) or torch.stack(...) make them), never into an input.",
    "average-drops-tied-name": "the result lacks {missing}: a filter or a loop over the names "
    "left it out, or, where two tied names share one tensor in a checkpoint, only one of them was "
    "kept. A state dict needs every name: load_state_dict would refuse it.",
    "average-integer-buffer-as-float": "`{counter}`, an integer buffer (a step counter), comes "
    "back as {dtype}: it was averaged as floats, or copied into a float tensor. Keep an integer "
    "buffer as the newest checkpoint has it, in its own dtype.",
    "average-integer-buffer-averaged": "`{counter}` is {got}; the checkpoints were saved at steps "
    "{steps}. An integer buffer (a step counter) is neither averaged, summed, nor taken from an "
    "older checkpoint: keep the newest checkpoint's, {last}.",
    "average-float64-from-float32": "`{name}` comes back as {dtype} from {want} weights: the "
    "average must keep the weights' dtype (a float64 state dict doubles the checkpoint and "
    "changes the model it is loaded into).",
    "average-deepcopy-keeps-tie": "the tied weights {tied} come out wrong although every other "
    "weight is right. In a checkpoint they are one tensor under two names; accumulating in "
    "place into a copy that keeps them shared (copy.deepcopy does) adds and divides that "
    "tensor once for each name.",
    "average-views-of-inputs": "with K = {K}, {shared} of the result share memory with the "
    "checkpoints you were given (a view or the same tensor): training from the average would "
    "change a saved checkpoint. Return new tensors (.clone()).",
}

MESSAGES = {
    "average-fixed-divisor": "`{name}`: with K = {K} checkpoints you divide the sum by {d}, the "
    "right number for the {d} checkpoints before: the divisor must be the number of checkpoints "
    "given, len(state_dicts), not a fixed {d}.",
    "average-twice": " Checkpoint {i} is counted twice: does the sum start from it and then "
    "add every checkpoint, itself included?",
    "average-off-by-one-last-left-out": "`{name}`: you average only the first {K_1} of the {K} "
    "checkpoints (off by one: the newest one is left out).",
    "average-divides-by-k-plus-1": "`{name}`: you divide the sum by K + 1 = {K1}; divide by "
    "K = {K}.",
    "average-first-only": "`{name}`: you return the first checkpoint's weights, not the mean "
    "of all {K}.",
    "average-not-a-dict": "return a dict name -> tensor (a state dict); got {kind}.",
    "average-missing": "the result lacks {missing}: load_state_dict would refuse it.",
    "average-extra": "the result has names no checkpoint has: {extra}.",
    "average-not-a-tensor": "`{name}` should be a tensor, got {kind}.",
    "average-shape": "`{name}` has shape {shape}, expected {want}.",
    "average-counter-dtype": "`{counter}` comes back as {dtype}; it was torch.int64.",
    "average-not-the-mean": "`{name}` is not the mean of the {K} checkpoints' `{name}`.",
}


def _checkpoints(K: int) -> list[StateDict]:
    """``K`` state dicts of one small "run": the weights move from checkpoint to checkpoint (one
    of them, ``gain``, in float64), a fixed float buffer (``pe``) is the same in all, ``step``
    counts, and the embedding is tied to the output layer (the two names share one tensor, as
    ``model.state_dict()`` gives them)."""
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
                "gain": (1.0 + shift + 0.1 * torch.randn(4, generator=g)).double(),  # float64
                _COUNTER: torch.tensor(100 * (i + 1)),  # int64
                _TIED[1]: embed,  # the same tensor, not a copy
            }
        )
    return states


def _storages(states: list[StateDict]) -> set[int]:
    return {t.untyped_storage().data_ptr() for s in states for t in s.values()}


def _mean_of(states: list[StateDict], name: str) -> Tensor:
    return torch.stack([s[name].double() for s in states]).mean(0)


_KS = (3, 2, 1)  # the numbers of checkpoints averaged, in the order they are probed


def _name_wrong_values(states: list[StateDict], got: Tensor, name: str, fit: bool = True) -> None:
    """Raise the verdict for a float entry whose values are not the mean: say which look-alike
    of the mean it is."""
    K, g = len(states), got.double()
    total = torch.stack([s[name].double() for s in states]).sum(0)
    looks_like = [  # the values, the mistake (or the message) they show
        (total, "average-sum-without-dividing"),
        (states[-1][name].double(), "average-last-only"),
        (torch.floor(total / K), "average-floor-division"),
    ]
    if K > 1:
        looks_like += [
            (_mean_of(states[1:], name), "average-off-by-one-first-left-out"),
            (_mean_of(states[:-1], name), "average-off-by-one-last-left-out"),
            (total / (K - 1), "average-divides-by-k-minus-1"),
            (total / (K + 1), "average-divides-by-k-plus-1"),
            (states[0][name].double(), "average-first-only"),
        ]
    for k in (k for k in _KS if k > K):  # right at a larger K: a divisor fixed at that K
        if close(g, total / k):
            raise Wrong.differs(MESSAGES, "average-fixed-divisor", name=name, K=K, d=k)
    for candidate, key in looks_like:
        if close(g, candidate):
            raise Wrong.named_or_differs(MISTAKES, MESSAGES, key, name=name, K=K, K_1=K - 1,
                                         K1=K + 1)  # fmt: skip
    if fit and K > 1:  # another weighting of the checkpoints: say which weights it gives each
        stacked = torch.stack([s[name].double().flatten() for s in states], 1)  # (n, K)
        weights = torch.linalg.lstsq(stacked, g.flatten()[:, None]).solution[:, 0]  # (K,)
        if close(stacked @ weights, g.flatten()):
            twice = [i for i, w in enumerate(weights.tolist()) if abs(w - 2 / K) < 1e-6]
            which = say(MESSAGES, "average-twice", i=twice[0]) if len(twice) == 1 else ""
            raise Wrong.named(MISTAKES, "average-weights", name=name, K=K, share=1 / K,
                              weights=[round(w, 3) for w in weights.tolist()], which=which)  # fmt: skip


def _averaged(fn: Callable, states: list[StateDict]) -> StateDict:
    """The reader's average of ``states``; an integer buffer given to torch.mean, named."""
    try:
        return fn(states)
    except RuntimeError as err:
        if "mean(): could not infer output dtype" in str(err):
            raise Wrong.named(
                MISTAKES, "average-torch-mean-on-integers", counter=_COUNTER
            ) from None
        raise


def _expect_inputs_untouched(states: list[StateDict], before: list[StateDict]) -> None:
    """The checkpoints given are left as they were."""
    for s, b in zip(states, before, strict=True):
        if any(not torch.equal(s[k], b[k]) for k in b):
            changed = sorted(k for k in b if not torch.equal(s[k], b[k]))
            raise Wrong.named(MISTAKES, "average-mutates-its-inputs", changed=changed)


def _expect_names_and_shapes(got: object, states: list[StateDict]) -> None:
    """A state dict with the checkpoints' names, each a tensor of its shape."""
    if not isinstance(got, dict):
        raise Wrong.differs(MESSAGES, "average-not-a-dict", kind=type(got).__name__)
    missing = [k for k in states[-1] if k not in got]
    if missing:
        if set(missing) & set(_TIED):
            raise Wrong.named(MISTAKES, "average-drops-tied-name", missing=missing)
        raise Wrong.differs(MESSAGES, "average-missing", missing=missing)
    extra = [k for k in got if k not in states[-1]]
    if extra:
        raise Wrong.differs(MESSAGES, "average-extra", extra=extra)
    for name, tensor in got.items():
        if not isinstance(tensor, Tensor):
            raise Wrong.differs(MESSAGES, "average-not-a-tensor", name=name,
                                kind=type(tensor).__name__)  # fmt: skip
        if tensor.shape != states[-1][name].shape:
            everything = torch.stack([s[name].double() for s in states]).mean()
            if (
                tensor.dim() == 0
                and tensor.is_floating_point()
                and close(tensor.double(), everything)
            ):
                raise Wrong.named(MISTAKES, "average-mean-without-dim", name=name)
            raise Wrong.differs(MESSAGES, "average-shape", name=name, shape=tuple(tensor.shape),
                                want=tuple(states[-1][name].shape))  # fmt: skip


def _expect_counter(got: StateDict, states: list[StateDict]) -> None:
    """The integer buffer kept as the newest checkpoint has it."""
    counter = got[_COUNTER]
    if counter.is_floating_point():
        raise Wrong.named(MISTAKES, "average-integer-buffer-as-float", counter=_COUNTER,
                              dtype=counter.dtype)  # fmt: skip
    if counter.dtype != torch.int64:
        raise Wrong.differs(
            MESSAGES, "average-counter-dtype", counter=_COUNTER, dtype=counter.dtype
        )
    if not torch.equal(counter, states[-1][_COUNTER]):
        steps = [int(s[_COUNTER]) for s in states]
        raise Wrong.named(MISTAKES, "average-integer-buffer-averaged", counter=_COUNTER,
                              got=counter.item(), steps=steps, last=steps[-1])  # fmt: skip


def _expect_means(got: StateDict, states: list[StateDict], K: int) -> None:
    """Every weight the mean of the checkpoints', in its own dtype; the tied ones too."""
    for name, tensor in got.items():
        if name != _COUNTER and tensor.dtype != states[-1][name].dtype:
            raise Wrong.named(MISTAKES, "average-float64-from-float32", name=name,
                                  dtype=tensor.dtype, want=states[-1][name].dtype)  # fmt: skip
    untied = [k for k in states[-1] if k not in _TIED and k != _COUNTER]
    for name in untied:
        if not close(got[name].double(), _mean_of(states, name)):
            _name_wrong_values(states, got[name], name)
            raise Wrong.differs(MESSAGES, "average-not-the-mean", name=name, K=K)
    for name in _TIED:
        if not close(got[name].double(), _mean_of(states, name)):
            _name_wrong_values(states, got[name], name, fit=False)  # the tie is the cause
            raise Wrong.named(MISTAKES, "average-deepcopy-keeps-tie", tied=list(_TIED))


def _expect_no_shared_memory(got: StateDict, inputs: set, K: int) -> None:
    """New tensors: nothing shares memory with the inputs."""
    shared = sorted(k for k, t in got.items() if t.untyped_storage().data_ptr() in inputs)
    if shared:
        raise Wrong.named(MISTAKES, "average-views-of-inputs", K=K, shared=shared)


@check("checkpoint averaging", call="fn(state_dicts)")
def check_average_checkpoints(fn: Callable[[list[StateDict]], StateDict]) -> Verdict:
    """``fn(state_dicts) -> state_dict``: for each name, the mean of that weight over the
    checkpoints, in the weight's own dtype; an integer buffer (a step counter) is not averaged
    but kept as the newest checkpoint has it; the result holds new tensors (sharing no memory
    with the inputs) and the inputs are left as they were."""
    for K in _KS:
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
