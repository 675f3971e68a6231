"""Blind set B7, check_causal_mask (chapter 12): the (T, T) causal mask, True = may attend."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"

_TABLE = torch.ones(8, 8, dtype=torch.bool).tril()  # built once for the longest sentence


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool))  # the triangle with the diagonal


def cm_negated(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).tril()  # the positions to hide


def cm_strict_lower(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # the past only


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 may attend, 0.0 may not


def cm_pytorch_square_subsequent(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # PyTorch's own causal mask


def cm_additive_minus_inf(T: int) -> Tensor:
    return torch.full((T, T), float("-inf")).triu(1)  # 0 where allowed, -inf above


def cm_no_broadcast(T: int) -> Tensor:
    positions = torch.arange(T)
    return positions <= positions  # key s <= query t


def cm_batch_axis(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for a batch


def cm_cached_table(T: int) -> Tensor:
    return _TABLE[:T, :T]  # sliced from a precomputed table


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_band(T: int) -> Tensor:
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]  # how far back the key is
    return (diff >= 0) & (diff < 4)  # the last 4 tokens, as with local attention


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    t = torch.arange(T)
    return t.unsqueeze(0) <= t.unsqueeze(1)  # key index <= query index


def cm_not_strict_upper(T: int, device: torch.device | str | None = None) -> Tensor:
    upper = torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)
    return ~upper  # not the future


def cm_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        check=CHECK,
        name="triu_with_diagonal",
        code=cm_triu,
        kind="mistake",
        what="I used torch.triu instead of tril, so each query sees itself and the future.",
    ),
    BlindCase(
        check=CHECK,
        name="negated_tril",
        code=cm_negated,
        kind="mistake",
        what="I returned ~tril(...), True at the positions to hide, the nn.Transformer polarity.",
    ),
    BlindCase(
        check=CHECK,
        name="strict_lower_triangle",
        code=cm_strict_lower,
        kind="mistake",
        what="I used tril(diagonal=-1), so a token cannot see itself.",
    ),
    BlindCase(
        check=CHECK,
        name="diagonal_plus_one",
        code=cm_one_ahead,
        kind="mistake",
        what="I used tril(diagonal=1), so each token also sees the next one.",
    ),
    BlindCase(
        check=CHECK,
        name="float_ones_and_zeros",
        code=cm_float_ones,
        kind="mistake",
        what="I returned torch.tril(torch.ones(T, T)) as it is, a float mask of 1.0 and 0.0, "
        "not bools.",
    ),
    BlindCase(
        check=CHECK,
        name="generate_square_subsequent_mask",
        code=cm_pytorch_square_subsequent,
        kind="mistake",
        what="I returned nn.Transformer.generate_square_subsequent_mask(T), a float mask of 0 "
        "and -inf.",
    ),
    BlindCase(
        check=CHECK,
        name="additive_minus_inf_matrix",
        code=cm_additive_minus_inf,
        kind="mistake",
        what="I built the notes' matrix with -inf above the diagonal and 0 elsewhere, a float "
        "additive mask instead of a boolean one.",
    ),
    BlindCase(
        check=CHECK,
        name="comparison_without_broadcast",
        code=cm_no_broadcast,
        kind="mistake",
        what="I compared arange(T) <= arange(T) without adding the row and column axes, so I "
        "get a (T,) vector of True.",
    ),
    BlindCase(
        check=CHECK,
        name="leading_batch_axis",
        code=cm_batch_axis,
        kind="mistake",
        what="I returned the mask with a leading batch axis, (1, T, T).",
    ),
    BlindCase(
        check=CHECK,
        name="sliced_from_small_table",
        code=cm_cached_table,
        kind="mistake",
        what="I sliced the mask from a table built once for length 8, so for T > 8 it comes back "
        "8 x 8.",
    ),
    BlindCase(
        check=CHECK,
        name="numpy_tril",
        code=cm_numpy,
        kind="mistake",
        what="I built it with np.tril and returned the NumPy array, not a tensor.",
    ),
    BlindCase(
        check=CHECK,
        name="band_of_four",
        code=cm_band,
        kind="mistake",
        what="I limited every query to itself and the 3 keys before it (the chapter's band "
        "mask), so for T > 4 a late query cannot see the early keys.",
    ),
    BlindCase(
        check=CHECK,
        name="uint8_mask",
        code=cm_uint8,
        kind="mistake",
        what="I made the mask torch.uint8, the old byte masks, instead of torch.bool.",
    ),
    BlindCase(
        check=CHECK,
        name="arange_comparison",
        code=cm_arange_compare,
        kind="correct",
        what="I compared key and query indices: arange(T)[None, :] <= arange(T)[:, None].",
    ),
    BlindCase(
        check=CHECK,
        name="not_strict_upper_device_arg",
        code=cm_not_strict_upper,
        kind="correct",
        what="I negated the strict upper triangle, ~triu(diagonal=1), and accepted an optional "
        "device.",
    ),
    BlindCase(
        check=CHECK,
        name="float_tril_to_bool",
        code=cm_float_then_bool,
        kind="correct",
        what="I built tril of float ones and converted it with .bool().",
    ),
    BlindCase(
        check=CHECK,
        name="row_loop",
        code=cm_loop,
        kind="correct",
        what="I filled a False (T, T) tensor row by row: mask[t, :t + 1] = True.",
    ),
]
