"""Blind set B11, check_padding_mask (chapter 1): the mask of the real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # token 1, 2, ..., T
    return positions[None, :] < lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)


def mask_width_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or len(lengths)  # one column per sequence
    return torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= (T - lengths)[:, None]


def mask_key_padding_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # ready for attention scores (B, H, T, T)


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, : int(n)] = True
    return mask


def mask_expand_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else lengths.max().item()
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return lengths.unsqueeze(1) > positions


def mask_from_tril(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Row n of a lower-triangular table holds n leading ones; pick row lengths[b]."""
    T = max_len if max_len is not None else int(lengths.max())
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n: n Trues
    return table[lengths.long()]


def mask_cumsum(lengths: Tensor, max_len: int | None = None, device: str | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else int(max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long, device=device).cumsum(dim=1)
    return counts <= lengths.view(-1, 1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I marked the padding with True (positions >= length), like a mask of what to hide.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        mask_long,
        "mistake",
        "I turned the comparison into a long tensor of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= length, so one pad position too many is marked real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T and kept < length, so each row loses its last token.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I put the positions on the rows, giving a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and forgot max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_batch_size,
        "mistake",
        "Without max_len I used len(lengths) as the width, the batch size, not the longest row.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I put the True values at the end of each row, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "key_padding_4d",
        mask_key_padding_shape,
        "mistake",
        "I returned the mask as (B, 1, 1, T), ready for attention, not (B, T).",
    ),
    BlindCase(
        CHECK,
        "float_ones_and_zeros",
        mask_float,
        "mistake",
        "I filled a torch.zeros float tensor with 1.0 on the real tokens.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A bool zeros tensor with the first lengths[b] entries of each row set True in a loop.",
    ),
    BlindCase(
        CHECK,
        "expanded_positions",
        mask_expand_compare,
        "correct",
        "The positions expanded to (B, T), compared as lengths > positions.",
    ),
    BlindCase(
        CHECK,
        "rows_of_a_triangle",
        mask_from_tril,
        "correct",
        "Indexes a (T + 1, T) strictly-lower-triangular table with the lengths.",
    ),
    BlindCase(
        CHECK,
        "cumsum_count",
        mask_cumsum,
        "correct",
        "Counts 1..T with cumsum and keeps count <= length; an extra device argument.",
    ),
]
