"""Blind set B14, check_causal_mask (chapter 12): the (T, T) True-may-attend causal mask."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # upper triangle


def cm_inverted(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).tril()  # True = hidden


def cm_future_true(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # True on the future


def cm_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # ones and zeros


def cm_long(T: int) -> Tensor:
    i = torch.arange(T)
    return (i[None, :] <= i[:, None]).long()


def cm_additive(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # PyTorch's own causal mask


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for the heads


def cm_compare_transposed(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # key index as the row


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # bytes, as older code used


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    i = torch.arange(T)
    return i.unsqueeze(1) >= i.unsqueeze(0)  # query index >= key index


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~future


def cm_numpy(T):
    return torch.from_numpy(np.tril(np.ones((T, T), dtype=bool)))


def cm_triu_transposed(T: int) -> Tensor:
    return torch.ones(T, T).triu().T.bool().contiguous()


CASES = [
    BlindCase(CHECK, "triu", cm_triu, "mistake", "I took the upper triangle with triu()."),
    BlindCase(
        CHECK,
        "inverted",
        cm_inverted,
        "mistake",
        "I returned ~tril(), True where a query may not look.",
    ),
    BlindCase(
        CHECK,
        "future_true",
        cm_future_true,
        "mistake",
        "I returned triu(diagonal=1), the positions to hide, as True.",
    ),
    BlindCase(
        CHECK,
        "strict_past",
        cm_strict,
        "mistake",
        "I used tril(diagonal=-1), so a token cannot attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), which lets each query see the next token.",
    ),
    BlindCase(
        CHECK,
        "float",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask.",
    ),
    BlindCase(CHECK, "long", cm_long, "mistake", "I converted the comparison with .long()."),
    BlindCase(
        CHECK,
        "additive_float",
        cm_additive,
        "mistake",
        "I used nn.Transformer.generate_square_subsequent_mask: floats, -inf at the future.",
    ),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched,
        "mistake",
        "I returned the mask already shaped (1, 1, T, T).",
    ),
    BlindCase(
        CHECK,
        "compare_transposed",
        cm_compare_transposed,
        "mistake",
        "I compared i[:, None] <= i[None, :], putting the key index on the rows.",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I built the mask as uint8, not bool."),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange,
        "correct",
        "Query index >= key index by broadcasting arange.",
    ),
    BlindCase(
        CHECK,
        "not_future",
        cm_not_future,
        "correct",
        "~triu(diagonal=1), with an extra device argument like the book's.",
    ),
    BlindCase(CHECK, "numpy_tril", cm_numpy, "correct", "np.tril of a bool array, from_numpy."),
    BlindCase(
        CHECK,
        "triu_transposed",
        cm_triu_transposed,
        "correct",
        "triu of float ones, transposed, then .bool().",
    ),
]
