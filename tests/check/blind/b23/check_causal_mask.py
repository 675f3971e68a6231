"""Blind set B23, check_causal_mask (chapter 12): the (T, T) causal mask as readers build it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from transformer_tutorial.sequences import padding_mask

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_true_at_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # the future is marked


def cm_strictly_below(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # only the past


def cm_upper_triangle(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_one_step_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_additive(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # PyTorch's own causal mask


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_int_compare(T: int) -> Tensor:
    i = torch.arange(T)
    return (i[None, :] <= i[:, None]).int()


def cm_annotated_batch_dim(T: int) -> Tensor:
    future = torch.triu(torch.ones((1, T, T)), diagonal=1).type(torch.uint8)
    return future == 0  # (1, T, T), ready to broadcast over the batch


def cm_numpy(T: int) -> Tensor:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_lengths_from_zero(T: int) -> Tensor:
    return padding_mask(torch.arange(T), max_len=T)  # query t sees t keys


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    rows = torch.arange(T).unsqueeze(1)  # query t
    cols = torch.arange(T).unsqueeze(0)  # key s
    return cols <= rows


def cm_not_future(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).triu(1)


def cm_transposed_upper(T: int) -> Tensor:
    return torch.ones(T, T).triu().T.bool().contiguous()


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "true_at_future",
        cm_true_at_future,
        "mistake",
        "I used triu(diagonal=1), marking the future keys with True",
    ),
    BlindCase(
        CHECK,
        "strictly_below",
        cm_strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot see itself",
    ),
    BlindCase(
        CHECK, "upper_triangle", cm_upper_triangle, "mistake", "I took triu() instead of tril()"
    ),
    BlindCase(CHECK, "one_step_ahead", cm_one_step_ahead, "mistake", "I used tril(diagonal=1)"),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask",
    ),
    BlindCase(
        CHECK,
        "additive",
        cm_additive,
        "mistake",
        "I returned nn.Transformer.generate_square_subsequent_mask(T), 0 and -inf",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I built the mask as uint8 ones"),
    BlindCase(
        CHECK,
        "int_compare",
        cm_int_compare,
        "mistake",
        "I compared positions and turned the result into int",
    ),
    BlindCase(
        CHECK,
        "annotated_batch_dim",
        cm_annotated_batch_dim,
        "mistake",
        "I wrote the Annotated Transformer's subsequent_mask, which is (1, T, T)",
    ),
    BlindCase(CHECK, "numpy", cm_numpy, "mistake", "I returned np.tril of a NumPy array"),
    BlindCase(
        CHECK,
        "lengths_from_zero",
        cm_lengths_from_zero,
        "mistake",
        "I used chapter 1's padding_mask with lengths arange(T)",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange_compare,
        "correct",
        "key index <= query index by broadcasting two aranges",
    ),
    BlindCase(CHECK, "not_future", cm_not_future, "correct", "the negation of triu(1)"),
    BlindCase(
        CHECK,
        "transposed_upper",
        cm_transposed_upper,
        "correct",
        "triu() of float ones, transposed, then .bool()",
    ),
    BlindCase(CHECK, "loop", cm_loop, "correct", "a loop setting mask[t, :t + 1] = True"),
]
