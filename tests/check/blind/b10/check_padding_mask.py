"""Blind set B10, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the pad positions


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = pad


def mask_float_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or int(max(lengths))
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
    return mask


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T).unsqueeze(0) <= lengths.unsqueeze(1)


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # the longest row is as wide as the batch gets
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else len(lengths)
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(T)[None, :]
    return positions >= (T - lengths)[:, None]  # the real tokens are the last lengths[b]


def mask_width_plus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = (int(lengths.max()) if max_len is None else max_len) + 1  # arange needs T + 1
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # (B, 1, 1, T), ready to broadcast against the scores


def mask_argument_named_T(lengths: Tensor, T: int | None = None) -> Tensor:
    if T is None:
        T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop_bool(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b in range(len(lengths)):
        mask[b, : int(lengths[b])] = True
    return mask


def mask_expand_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else lengths.max().item()
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return lengths.view(-1, 1) > positions


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths.max())
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(-1)


def mask_with_device(
    lengths: Tensor, max_len: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    """Takes a list too, and an optional device; builds the mask with torch.lt."""
    lengths = torch.as_tensor(lengths, device=device)
    if max_len is None:
        max_len = int(lengths.max())
    return torch.lt(torch.arange(max_len, device=lengths.device).unsqueeze(0), lengths[:, None])


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding (the positions to hide), the opposite polarity.",
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
        "float_loop",
        mask_float_loop,
        "mistake",
        "I filled a torch.zeros(B, T) with 1s in a loop, so the mask is float.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so one padding position per row is True.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I put positions on the rows and the batch on the columns: a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always make the mask as wide as the longest row and never use max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_batch_size,
        "mistake",
        "Without max_len I used len(lengths) as the width, which is the batch size.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I marked the last lengths[b] positions as real, as if padding came first.",
    ),
    BlindCase(
        CHECK,
        "width_plus_one",
        mask_width_plus_one,
        "mistake",
        "I made the mask one column wider than asked (T + 1 positions).",
    ),
    BlindCase(
        CHECK,
        "attention_shape",
        mask_for_attention,
        "mistake",
        "I returned the mask already shaped (B, 1, 1, T) for attention instead of (B, T).",
    ),
    BlindCase(
        CHECK,
        "argument_named_T",
        mask_argument_named_T,
        "mistake",
        "I called the second argument T instead of max_len, so max_len=7 is refused.",
    ),
    BlindCase(
        CHECK,
        "loop_bool",
        mask_loop_bool,
        "correct",
        "A bool zeros tensor with the first lengths[b] entries of each row set to True in a loop.",
    ),
    BlindCase(
        CHECK,
        "expand_compare",
        mask_expand_compare,
        "correct",
        "Positions expanded to (B, T) and compared as lengths.view(-1, 1) > positions.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "Counts 1..T from a cumsum of ones, compared with <= lengths.",
    ),
    BlindCase(
        CHECK,
        "lt_with_device",
        mask_with_device,
        "correct",
        "torch.lt on broadcast positions; accepts a list and an extra optional device argument.",
    ),
]
