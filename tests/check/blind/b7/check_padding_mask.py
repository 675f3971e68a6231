"""Blind set B7, check_padding_mask (chapter 1): the (B, T) mask of real tokens."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]  # position t is real if t <= length


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    positions = torch.arange(1, T + 1)  # positions 1..T, as one counts words
    return positions[None, :] < lengths[:, None]


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding, as key_padding_mask


def mask_long_ints(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1 = real, 0 = padding


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())  # the batch is as wide as its longest row
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_from_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = len(lengths) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_of_first_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths[0]) if max_len is None else max_len  # batches come sorted, longest first
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_max_of_none(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max(max_len, int(lengths.max()))  # never narrower than the longest row
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_unsqueezes_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    lengths.unsqueeze_(-1)  # (B, 1), to compare with the positions
    return torch.arange(T) < lengths


def mask_float_multiplied(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    ones = torch.ones(len(lengths), T)
    return ones * (torch.arange(T)[None, :] < lengths[:, None])  # 1.0 real, 0.0 padding


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_cumsum(lengths: Tensor, max_len: int | None = None, device: str | None = None) -> Tensor:
    """With an extra optional device argument."""
    lengths = torch.as_tensor(lengths, device=device)
    T = int(lengths.max()) if max_len is None else max_len
    counts = torch.ones(len(lengths), T, dtype=torch.long, device=device).cumsum(dim=1)
    return counts <= lengths.unsqueeze(1)  # the 1-based count of position t is t + 1


def mask_from_pad_sequence(lengths: Tensor, max_len: int | None = None) -> Tensor:
    rows = [torch.ones(int(n), dtype=torch.bool) for n in lengths]
    mask = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=False)
    if max_len is not None:
        mask = F.pad(mask, (0, max_len - mask.shape[1]), value=False)
    return mask


def mask_greater_reversed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len or int(lengths.max())
    return lengths.view(-1, 1) > torch.arange(T).view(1, -1)


CASES = [
    BlindCase(
        check=CHECK,
        name="less_equal_off_by_one",
        code=mask_less_equal,
        kind="mistake",
        what="I compared positions with <= instead of <, so each row has one True too many.",
    ),
    BlindCase(
        check=CHECK,
        name="positions_counted_from_one",
        code=mask_positions_from_one,
        kind="mistake",
        what="I numbered the positions 1..T with arange(1, T + 1) but kept the < comparison, "
        "so each row has one True too few.",
    ),
    BlindCase(
        check=CHECK,
        name="true_marks_padding",
        code=mask_true_on_padding,
        kind="mistake",
        what="I made the mask True on the padding (positions >= length), the polarity of "
        "key_padding_mask in nn.MultiheadAttention.",
    ),
    BlindCase(
        check=CHECK,
        name="long_not_bool",
        code=mask_long_ints,
        kind="mistake",
        what="I returned the mask as a long tensor of 0s and 1s with .long() instead of bools.",
    ),
    BlindCase(
        check=CHECK,
        name="transposed_t_by_b",
        code=mask_transposed,
        kind="mistake",
        what="I put the positions on the rows and the lengths on the columns, so the mask is "
        "(T, B) instead of (B, T).",
    ),
    BlindCase(
        check=CHECK,
        name="max_len_ignored",
        code=mask_ignores_max_len,
        kind="mistake",
        what="I accepted max_len but always used max(lengths) as the width.",
    ),
    BlindCase(
        check=CHECK,
        name="width_is_batch_size",
        code=mask_width_from_batch_size,
        kind="mistake",
        what="I used len(lengths), the batch size, as the width T when max_len is None.",
    ),
    BlindCase(
        check=CHECK,
        name="width_of_first_row",
        code=mask_width_of_first_row,
        kind="mistake",
        what="I took the width from lengths[0], assuming the batch is sorted longest first.",
    ),
    BlindCase(
        check=CHECK,
        name="max_with_none",
        code=mask_max_of_none,
        kind="mistake",
        what="I wrote T = max(max_len, longest) without handling max_len=None, which raises a "
        "TypeError in the default call.",
    ),
    BlindCase(
        check=CHECK,
        name="unsqueeze_in_place_on_lengths",
        code=mask_unsqueezes_in_place,
        kind="mistake",
        what="I reshaped the lengths with lengths.unsqueeze_(-1), in place, which changes the "
        "caller's tensor to (B, 1); a second call with the same lengths returns (B, 1, T).",
    ),
    BlindCase(
        check=CHECK,
        name="float_ones_times_mask",
        code=mask_float_multiplied,
        kind="mistake",
        what="I built the mask as a float tensor of ones multiplied by the comparison, so it "
        "comes back as 1.0/0.0 floats.",
    ),
    BlindCase(
        check=CHECK,
        name="loop_over_rows",
        code=mask_loop,
        kind="correct",
        what="I filled a zero bool tensor row by row with mask[b, :n] = True.",
    ),
    BlindCase(
        check=CHECK,
        name="cumsum_with_device_arg",
        code=mask_cumsum,
        kind="correct",
        what="I compared a cumulative count 1..T with the lengths (<=), and added an optional "
        "device argument.",
    ),
    BlindCase(
        check=CHECK,
        name="pad_sequence_of_trues",
        code=mask_from_pad_sequence,
        kind="correct",
        what="I padded rows of True with pad_sequence(padding_value=False) and widened the "
        "result to max_len with F.pad.",
    ),
    BlindCase(
        check=CHECK,
        name="lengths_greater_than_positions",
        code=mask_greater_reversed,
        kind="correct",
        what="I wrote the comparison the other way round, lengths[:, None] > positions, with "
        "view instead of indexing.",
    ),
]
