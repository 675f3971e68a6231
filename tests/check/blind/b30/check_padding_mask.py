"""Blind set B30, check_padding_mask (chapter 1): the (B, T) mask of a padded batch, as readers
write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_as_uint8(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).to(torch.uint8)  # 1 = real token


def mask_includes_length(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_time_by_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # max_len is only a hint
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # one column per sentence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_extra_columns_true(lengths: Tensor, max_len: int | None = None) -> Tensor:
    mask = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
    if max_len is not None:
        mask = F.pad(mask, (0, max_len - mask.shape[1]), value=1)  # widen to max_len
    return mask.bool()


def mask_for_attention_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # ready for (B, H, T_q, T_k) scores


def mask_default_max_len_512(lengths: Tensor, max_len: int = 512) -> Tensor:
    return torch.arange(max_len)[None, :] < lengths[:, None]


def mask_unsqueezes_lengths_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T) < lengths.unsqueeze_(1)  # (B, 1) against (T,)


def mask_sorted_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths, _ = lengths.sort(descending=True)  # longest first, as for packing
    T = int(lengths[0]) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_skips_first_token(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # positions counted from 1
    return positions[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Count down from each length: position t is real while t < length."""
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else int(max_len)
    steps = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return steps.le(lengths.unsqueeze(-1))


def mask_expand_lt(lengths: Tensor, max_len: int | None = None) -> Tensor:
    B = lengths.shape[0]
    T = max_len or int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(B, T)
    return positions.lt(lengths.view(B, 1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding, the positions to hide.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        mask_as_uint8,
        "mistake",
        "I returned the mask as uint8 ones and zeros, the way older PyTorch code did.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_includes_length,
        "mistake",
        "I compared positions <= length, so one padding cell per row counts as real.",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        mask_time_by_batch,
        "mistake",
        "I broadcast the other way round and got a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and did nothing with max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "Without max_len I used len(lengths) as the width, the number of sentences.",
    ),
    BlindCase(
        CHECK,
        "extra_columns_true",
        mask_extra_columns_true,
        "mistake",
        "For a max_len wider than the longest row I widened the mask with F.pad(value=1), "
        "so the extra padding columns count as real.",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_for_attention_shape,
        "mistake",
        "I returned it as (B, 1, 1, T), ready for the attention scores, instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "default_max_len_512",
        mask_default_max_len_512,
        "mistake",
        "I gave max_len the default 512, the longest sentence a model takes, instead of None.",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_in_place",
        mask_unsqueezes_lengths_in_place,
        "mistake",
        "I used lengths.unsqueeze_(1), which reshapes the caller's lengths tensor.",
    ),
    BlindCase(
        CHECK,
        "rows_sorted",
        mask_sorted_rows,
        "mistake",
        "I sorted the lengths longest first before building the mask, so the rows are out of "
        "order.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_skips_first_token,
        "mistake",
        "I numbered the positions from 1, so the last real token of every row is marked as "
        "padding.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        mask_loop,
        "correct",
        "A zeros mask and a loop that sets the first lengths[b] cells of each row to True.",
    ),
    BlindCase(
        CHECK,
        "cumsum_positions",
        mask_cumsum,
        "correct",
        "Positions 1..T from a cumsum of ones, compared with le against the lengths.",
    ),
    BlindCase(
        CHECK,
        "expanded_lt",
        mask_expand_lt,
        "correct",
        "arange expanded to (B, T) and .lt against lengths.view(B, 1); max_len or the longest.",
    ),
]
