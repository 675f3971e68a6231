"""Blind set B17, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def causal_triu_blocked(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # the future, hidden


def causal_strictly_below(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # only the past


def causal_one_step_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def causal_upper(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # query <= key


def causal_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend


def causal_additive(T: int) -> Tensor:
    return torch.full((T, T), float("-inf")).triu(1)  # added to the scores, as in the notes


def causal_long(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def causal_with_batch_axis(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for the batch


def causal_numpy(T: int):
    return np.tril(np.ones((T, T), dtype=bool))


def causal_from_tril_equals_zero(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)) == 0  # the Annotated Transformer's subsequent_mask


def causal_shifted_rows(T: int) -> Tensor:
    return torch.ones(T + 1, T + 1, dtype=torch.bool).tril()[1:, :-1]  # rows from 1: see 0..t+1


# ---------------------------------------------------------------- correct variants


def causal_arange(T: int) -> Tensor:
    """Key index <= query index, by broadcasting two aranges."""
    pos = torch.arange(T)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)


def causal_not_triu(T: int, device: torch.device | str | None = None) -> Tensor:
    """The negation of the blocked future; an optional device argument."""
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


def causal_loop(T: int) -> Tensor:
    """Row by row."""
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def causal_float_tril_to_bool(T: int) -> Tensor:
    """A float tril turned into bools at the end."""
    return torch.tril(torch.ones(T, T)).bool()


CASES = [
    BlindCase(
        CHECK,
        "triu_blocked",
        causal_triu_blocked,
        "mistake",
        "I returned triu(diagonal=1), True on the future to hide, the polarity of nn.Transformer.",
    ),
    BlindCase(
        CHECK,
        "strictly_below_diagonal",
        causal_strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to its own position.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        causal_one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next token too.",
    ),
    BlindCase(
        CHECK,
        "upper_triangle",
        causal_upper,
        "mistake",
        "I compared query <= key, which gives the upper triangle (the mask transposed).",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        causal_additive,
        "mistake",
        "I returned the additive form of the notes, 0 on and below the diagonal and -inf above.",
    ),
    BlindCase(
        CHECK,
        "long_dtype",
        causal_long,
        "mistake",
        "I made the ones with dtype=torch.long, so the mask holds integers.",
    ),
    BlindCase(
        CHECK,
        "batch_axis_added",
        causal_with_batch_axis,
        "mistake",
        "I returned it as (1, T, T) so that it broadcasts over the batch.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I built it with np.tril and returned the NumPy array.",
    ),
    BlindCase(
        CHECK,
        "tril_equals_zero",
        causal_from_tril_equals_zero,
        "mistake",
        "I wrote torch.tril(torch.ones(T, T)) == 0, which is True on the future.",
    ),
    BlindCase(
        CHECK,
        "shifted_rows",
        causal_shifted_rows,
        "mistake",
        "I cut a (T + 1, T + 1) triangle with [1:, :-1], which shifts it one step: row t sees "
        "keys 0 .. t + 1.",
    ),
    BlindCase(
        CHECK,
        "arange_broadcast",
        causal_arange,
        "correct",
        "Two broadcast aranges compared: key <= query.",
    ),
    BlindCase(
        CHECK,
        "not_triu_with_device",
        causal_not_triu,
        "correct",
        "~triu(ones, diagonal=1), with an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        causal_loop,
        "correct",
        "A bool zeros matrix filled row by row up to the diagonal.",
    ),
    BlindCase(
        CHECK,
        "float_tril_to_bool",
        causal_float_tril_to_bool,
        "correct",
        "A float tril of ones converted with .bool() at the end.",
    ),
]
