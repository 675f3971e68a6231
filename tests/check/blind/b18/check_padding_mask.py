"""Blind set B18, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = padding, as in key_padding_mask


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = padding


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T)  # positions 1..T-1, one short
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B): one column per sentence


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())  # the longest row decides the width
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or len(lengths)  # number of sentences, not their length
    return torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)


def mask_padded_with_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]  # (B, T_longest)
    if max_len is not None and max_len > T:
        mask = F.pad(mask, (0, max_len - T), value=1)  # widen to max_len
    return mask


def mask_left_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]  # the real tokens at the end


def mask_unsqueezes_lengths(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    lengths.unsqueeze_(1)  # (B, 1) to broadcast against the positions
    return torch.arange(T).unsqueeze(0) < lengths


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T)  # multiplied into the loss later anyway
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths).tolist()
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_expand_and_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    B = lengths.numel()
    T = max_len if max_len is not None else lengths.max().item()
    positions = torch.arange(T, device=lengths.device).expand(B, T)  # (B, T)
    return ~(positions >= lengths.unsqueeze(-1))


def mask_tril_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Row n of a lower-triangular table has exactly n leading True values."""
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else int(max_len)
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(diagonal=-1)  # (T + 1, T)
    return table[lengths]


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made True mean padding, as nn.MultiheadAttention's key_padding_mask does.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_as_long,
        "mistake",
        "I turned the comparison into a 0/1 long tensor with .long() instead of keeping bools.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so each row has one True too many.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I counted positions from 1 with torch.arange(1, T), which makes the mask one column "
        "short.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I put the positions on the rows and the sentences on the columns: a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and never looked at max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "I took the width from len(lengths), the number of sentences, instead of the longest "
        "length.",
    ),
    BlindCase(
        CHECK,
        "widened_with_true",
        mask_padded_with_true,
        "mistake",
        "To reach max_len I padded the mask with F.pad(value=1), so the extra columns are True.",
    ),
    BlindCase(
        CHECK,
        "real_tokens_at_the_end",
        mask_left_aligned,
        "mistake",
        "I put the True values at the end of each row, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "unsqueezes_lengths_in_place",
        mask_unsqueezes_lengths,
        "mistake",
        "I reshaped lengths with unsqueeze_(1), which changes the caller's tensor to (B, 1).",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I filled a float tensor of zeros with ones at the real tokens (a float mask).",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A Python loop that sets the first lengths[b] entries of a bool tensor to True.",
    ),
    BlindCase(
        CHECK,
        "expand_not_ge",
        mask_expand_and_compare,
        "correct",
        "The positions expanded to (B, T), then ~(positions >= lengths).",
    ),
    BlindCase(
        CHECK,
        "rows_of_tril",
        mask_tril_rows,
        "correct",
        "Rows of a strictly lower-triangular (T + 1, T) table indexed by the lengths.",
    ),
]
