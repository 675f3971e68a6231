"""Chapter 1, "Your turn": ``padding_mask(lengths, max_len=None) -> (B, T) bool``, True = real."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# --- mistakes ---------------------------------------------------------------------------------


def true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks where the padding is


def less_or_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # position numbers 1..T, like "the 1st token"
    return positions[None, :] < lengths[:, None]


def long_zeros_and_ones(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = padding


def additive_minus_inf(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    real = torch.arange(T)[None, :] < lengths[:, None]
    mask = torch.zeros(len(lengths), T)
    return mask.masked_fill(~real, float("-inf"))  # ready to add to the scores


def time_by_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B), one column per sentence


def max_len_ignored(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())  # max_len is only a hint, the longest row is enough
    return torch.arange(T)[None, :] < lengths[:, None]


def width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = len(lengths) if max_len is None else max_len  # the number of lengths, i.e. B
    return torch.arange(T)[None, :] < lengths[:, None]


def no_new_axes(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T) < lengths.unsqueeze(0)).expand(len(lengths), T)


def last_n_positions(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, -n:] = True  # the last n positions
    return mask


# --- correct variants -------------------------------------------------------------------------


def row_by_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else int(max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def expanded_positions(
    lengths: Tensor, max_len: int | None = None, device: torch.device | None = None
) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = max_len if max_len is not None else int(lengths.max().item())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return positions < lengths.unsqueeze(1)


def cumsum_of_ones(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    count = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return count <= lengths.view(-1, 1)


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        true_on_padding,
        "mistake",
        "I compared with >=, so my mask is True on the padding instead of on the real tokens.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        less_or_equal,
        "mistake",
        "I compared positions with <= lengths, which marks one padding position too many.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        positions_from_one,
        "mistake",
        "I numbered the positions 1..T and kept < lengths, so each row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "long_zeros_and_ones",
        long_zeros_and_ones,
        "mistake",
        "I returned the mask as a long tensor of 0 and 1 instead of bool.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        additive_minus_inf,
        "mistake",
        "I returned an additive float mask, 0 on real tokens and -inf on padding, instead of bool.",
    ),
    BlindCase(
        CHECK,
        "time_by_batch",
        time_by_batch,
        "mistake",
        "I built the comparison with the positions down the rows, so the mask comes out (T, B).",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        max_len_ignored,
        "mistake",
        "I always used the longest length as the width and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        width_is_batch_size,
        "mistake",
        "Without max_len I took len(lengths), the batch size, as the width T.",
    ),
    BlindCase(
        CHECK,
        "no_new_axes",
        no_new_axes,
        "mistake",
        "I compared arange(T) with lengths without putting lengths in a column, so the shapes "
        "(T,) and (1, B) do not line up.",
    ),
    BlindCase(
        CHECK,
        "last_n_positions",
        last_n_positions,
        "mistake",
        "In my loop I set mask[b, -n:] (the last n positions) instead of mask[b, :n].",
    ),
    BlindCase(
        CHECK,
        "row_by_row",
        row_by_row,
        "correct",
        "I filled a bool tensor of zeros row by row with mask[b, :n] = True.",
    ),
    BlindCase(
        CHECK,
        "expanded_positions",
        expanded_positions,
        "correct",
        "I expanded arange(T) to (B, T) and compared with lengths.unsqueeze(1), with an extra "
        "device argument.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_ones",
        cumsum_of_ones,
        "correct",
        "I counted 1..T with a cumsum of ones and kept the counts <= length.",
    ),
]
