"""Blind set B33, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] >= lengths[:, None]  # True where we pad


def mask_as_int(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).int()  # 1 = real, 0 = pad


def mask_as_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T)  # ready to multiply the embeddings with
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


def mask_less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # the 1st, 2nd, ... token
    return positions[None, :] < lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(int(lengths.max()))
    return positions[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(len(lengths))  # one column per entry of lengths
    return positions[None, :] < lengths[:, None]


def mask_with_feature_axis(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return (positions[None, :] < lengths[:, None]).unsqueeze(-1)  # (B, T, 1) for the embeddings


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    positions = torch.arange(_width(lengths, max_len))
    return positions < lengths  # broadcasting will sort it out


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(T)
    return positions[None, :] >= (T - lengths)[:, None]  # the real tokens at the end of the row


def mask_max_len_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len + 1  # max_len is the last index
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max(lengths.tolist()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    return torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths.unsqueeze(1)


def mask_not_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    is_pad = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)
    return ~is_pad


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.view(-1, 1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True at the padded positions, since that is what gets masked.",
    ),
    BlindCase(
        CHECK,
        "int_mask",
        mask_as_int,
        "mistake",
        "I turned the comparison into ints with .int(), 1 for a real token and 0 for padding.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_as_float,
        "mistake",
        "I filled a torch.zeros(B, T) float tensor with 1.0 for the real tokens, so I can "
        "multiply it with the vectors.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_or_equal,
        "mistake",
        "I compared positions <= lengths, so one padding position per row is True too.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T and kept position < length, which drops each row's last "
        "real token.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I put the positions on the rows and the lengths on the columns, giving (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch",
        mask_width_is_batch,
        "mistake",
        "I used torch.arange(len(lengths)) for the positions, mixing up B and T.",
    ),
    BlindCase(
        CHECK,
        "feature_axis",
        mask_with_feature_axis,
        "mistake",
        "I return the mask as (B, T, 1) so that it multiplies the (B, T, F) vectors directly.",
    ),
    BlindCase(
        CHECK,
        "no_unsqueeze",
        mask_no_unsqueeze,
        "mistake",
        "I compared torch.arange(T) < lengths without adding the axes, trusting broadcasting.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I marked the last lengths[b] positions of each row as real, as if the padding came first.",
    ),
    BlindCase(
        CHECK,
        "max_len_plus_one",
        mask_max_len_plus_one,
        "mistake",
        "I read max_len as the last position index and made the mask max_len + 1 wide.",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A bool zeros tensor, with the first lengths[b] entries of each row set to True in a loop.",
    ),
    BlindCase(
        CHECK,
        "expand",
        mask_expand,
        "correct",
        "torch.arange(T) expanded to (B, T) and compared with lengths.unsqueeze(1).",
    ),
    BlindCase(
        CHECK,
        "not_padding",
        mask_not_padding,
        "correct",
        "I computed where the padding is (position >= length) and inverted it with ~.",
    ),
    BlindCase(
        CHECK,
        "cumsum",
        mask_cumsum,
        "correct",
        "A running count 1..T from cumsum of ones, kept where it is <= the row's length.",
    ),
]
