"""Blind cases for check_causal_mask (chapter 12)."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


def cm_triu(T):
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True on the future


def cm_strict(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # cannot see itself


def cm_upper(T):
    return torch.triu(torch.ones(T, T, dtype=torch.bool))  # transposed: row t sees t..T-1


def cm_float(T):
    return torch.tril(torch.ones(T, T))  # 1.0/0.0 floats


def cm_additive(T):
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # the additive float mask


def cm_plus_one(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # sees one step ahead


def cm_arange_wrong(T):
    i = torch.arange(T)
    return i[:, None] >= i[None, :] + 1  # strict again, written with arange


def cm_batched(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]  # (1, 1, T, T)


def cm_class(T):
    class CausalMask:
        def __init__(self, T):
            self.mask = torch.tril(torch.ones(T, T, dtype=torch.bool))

    return CausalMask(T)


def cm_no_args():
    return torch.tril(torch.ones(8, 8, dtype=torch.bool))


def cm_arange(T: int) -> Tensor:
    pos = torch.arange(T)
    return pos.unsqueeze(1) >= pos.unsqueeze(0)


def cm_not_triu(T: int, device=None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_loop(T: int) -> Tensor:
    m = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        m[t, : t + 1] = True
    return m


CASES = [
    BlindCase(
        CHECK,
        "true_on_future",
        cm_triu,
        "mistake",
        "returns triu(diagonal=1), True on the future keys (the blocked-is-True polarity)",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        cm_strict,
        "mistake",
        "uses tril(diagonal=-1), so a query may not attend to itself",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_upper,
        "mistake",
        "uses triu instead of tril, so row t sees keys t..T-1 (transposed)",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "returns tril(ones(T, T)) as floats instead of bools",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive,
        "mistake",
        "returns the additive float mask with -inf above the diagonal and 0 elsewhere",
    ),
    BlindCase(
        CHECK,
        "sees_one_ahead",
        cm_plus_one,
        "mistake",
        "uses tril(diagonal=1), so each query also sees the next key",
    ),
    BlindCase(
        CHECK,
        "arange_strict",
        cm_arange_wrong,
        "mistake",
        "compares row >= column + 1 with arange, which leaves the diagonal out",
    ),
    BlindCase(
        CHECK,
        "with_batch_and_head_axes",
        cm_batched,
        "mistake",
        "returns a (1, 1, T, T) mask ready for (B, H, T, T) scores instead of (T, T)",
    ),
    BlindCase(
        CHECK,
        "slip_returns_object",
        cm_class,
        "mistake",
        "returns an object holding the mask in an attribute instead of the tensor",
    ),
    BlindCase(
        CHECK,
        "slip_no_length_argument",
        cm_no_args,
        "mistake",
        "writes the function without the T argument, with a fixed size 8",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange,
        "correct",
        "compares row and column indices from arange with >=",
    ),
    BlindCase(
        CHECK,
        "negated_triu_device_arg",
        cm_not_triu,
        "correct",
        "negates triu(1) of ones and takes an optional device argument",
    ),
    BlindCase(
        CHECK, "python_loop", cm_loop, "correct", "fills a False matrix row by row in a loop"
    ),
]
