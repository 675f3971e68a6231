"""Blind set B25, check_padding_mask (chapter 1): the boolean mask of real tokens as readers write it."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_at_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = pad, as key_padding_mask


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_one_too_many(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the longest row sets the width
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) + 1 if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_of_first_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths[0]) if max_len is None else max_len  # batches are sorted, longest first
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T), ready for the scores


def mask_uint8(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.uint8)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1
    return mask


def mask_padding_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]  # the tokens at the end of a row


def mask_numpy(lengths: Tensor, max_len: int | None = None) -> np.ndarray:
    lengths = np.asarray(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return np.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # one entry per sequence
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b in range(len(lengths)):
        mask[b, : int(lengths[b])] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    B = lengths.shape[0]
    T = max_len if max_len is not None else int(lengths.max().item())
    positions = torch.arange(T, device=lengths.device).expand(B, T)
    return positions.lt(lengths.unsqueeze(1))


def mask_one_hot_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    ends = F.one_hot(lengths.long(), num_classes=T + 1)  # a 1 at each row's first pad
    return ~ends.cumsum(dim=1)[:, :T].bool()  # False from the first pad on


def mask_stack_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else max(lengths.tolist())
    return torch.stack([torch.arange(T) < n for n in lengths.tolist()])


CASES = [
    BlindCase(
        CHECK,
        "true_at_padding",
        mask_true_at_padding,
        "mistake",
        "I made the mask True on the padding, like key_padding_mask in nn.MultiheadAttention.",
    ),
    BlindCase(
        CHECK,
        "long_zeros_ones",
        mask_long,
        "mistake",
        "I turned the comparison into a long tensor of 0s and 1s instead of keeping bools.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_one_too_many,
        "mistake",
        "I compared positions with <= lengths, so each row has one True too many.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I put the positions on the rows and the lengths on the columns, giving (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and never read max_len.",
    ),
    BlindCase(
        CHECK,
        "width_plus_one",
        mask_width_plus_one,
        "mistake",
        "Without max_len I made the mask max(lengths) + 1 wide, one column too many.",
    ),
    BlindCase(
        CHECK,
        "width_of_first_row",
        mask_width_of_first_row,
        "mistake",
        "I took the width from lengths[0], thinking the longest row comes first.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T, so with < lengths each row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "shaped_for_attention",
        mask_for_attention,
        "mistake",
        "I returned the mask already shaped (B, 1, 1, T) for attention scores, not (B, T).",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        mask_uint8,
        "mistake",
        "I filled a uint8 tensor with ones, as older PyTorch masks were, instead of bool.",
    ),
    BlindCase(
        CHECK,
        "real_tokens_at_the_end",
        mask_padding_first,
        "mistake",
        "I marked the last lengths[b] positions as real, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        mask_numpy,
        "mistake",
        "I built the mask with NumPy and returned an array, not a tensor.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "Without max_len I used len(lengths) as the width, mixing up B and T.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A False bool mask, then row b set True up to lengths[b] in a Python loop.",
    ),
    BlindCase(
        CHECK,
        "expand_lt",
        mask_expand,
        "correct",
        "arange(T).expand(B, T).lt(lengths.unsqueeze(1)), on the device of the lengths.",
    ),
    BlindCase(
        CHECK,
        "one_hot_cumsum",
        mask_one_hot_cumsum,
        "correct",
        "A one-hot at each row's first pad, cumsum along the row, then negated.",
    ),
    BlindCase(
        CHECK,
        "stack_rows",
        mask_stack_rows,
        "correct",
        "One arange(T) < n row per length, stacked.",
    ),
]
