"""Blind set B28, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers
write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else len(lengths)  # one column per sequence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    positions = torch.arange(1, T + 1)  # the 1st, 2nd, ... token
    return positions[None, :] < lengths[:, None]


def mask_one_wider(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max()) + 1  # positions 0..max
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_no_unsqueeze(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T) < lengths  # broadcasting will sort it out


def mask_key_padding_shape(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # ready for (B, H, T_q, T_k) scores


def mask_unsqueezes_lengths_in_place(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    lengths.unsqueeze_(1)  # (B, 1)
    return torch.arange(T).unsqueeze(0) < lengths


def mask_is_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding, to be masked


def mask_ignores_max_len_when_smaller(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    if max_len is not None:
        T = min(T, max_len)  # never wider than it needs to be
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_loop_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


def mask_tril_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    steps = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n: n leading Trues
    return steps[lengths.clamp(max=T) - 1]  # row n - 1 for a sentence of n tokens


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B), time first like nn.RNN


# ---------------------------------------------------------------- correct variants


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(1)


def mask_loop_bool(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = [int(n) for n in lengths]
    T = max(lengths) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, :n] = True
    return mask


def mask_reversed_comparison(
    lengths: Tensor, max_len: int | None = None, device: torch.device | None = None
) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = max_len if max_len is not None else int(lengths.max().item())
    return lengths.unsqueeze(-1) > torch.arange(T, device=lengths.device)


def mask_from_steps_table(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max())
    table = torch.ones(T + 1, T, dtype=torch.bool).tril(-1)  # row n: n leading Trues
    return table[lengths]


CASES = [
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch,
        "mistake",
        "I used len(lengths) for T, the number of sentences, instead of the longest length.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T, so the last real token of every row is marked padding.",
    ),
    BlindCase(
        CHECK,
        "one_column_too_many",
        mask_one_wider,
        "mistake",
        "Without max_len I made T = max(lengths) + 1, one column wider than the batch.",
    ),
    BlindCase(
        CHECK,
        "arange_not_unsqueezed",
        mask_no_unsqueeze,
        "mistake",
        "I compared arange(T) < lengths without adding the axes, expecting broadcasting to "
        "give (B, T).",
    ),
    BlindCase(
        CHECK,
        "key_padding_shape",
        mask_key_padding_shape,
        "mistake",
        "I returned the mask as (B, 1, 1, T), the shape attention wants, not (B, T).",
    ),
    BlindCase(
        CHECK,
        "unsqueeze_in_place",
        mask_unsqueezes_lengths_in_place,
        "mistake",
        "I used lengths.unsqueeze_(1), which changes the caller's lengths tensor to (B, 1).",
    ),
    BlindCase(
        CHECK,
        "marks_padding",
        mask_is_padding,
        "mistake",
        "My mask is True on the padding (the positions to hide), False on real tokens.",
    ),
    BlindCase(
        CHECK,
        "max_len_only_cuts",
        mask_ignores_max_len_when_smaller,
        "mistake",
        "I treated max_len as an upper bound (min with the longest length), so it never widens "
        "the mask.",
    ),
    BlindCase(
        CHECK,
        "float_ones_loop",
        mask_loop_float,
        "mistake",
        "A loop that writes 1.0 into torch.zeros(B, T): a float mask of ones and zeros.",
    ),
    BlindCase(
        CHECK,
        "steps_table_off_by_one",
        mask_tril_rows,
        "mistake",
        "I picked row n - 1 of a table whose row n has n leading Trues, one token short.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_transposed,
        "mistake",
        "I built the mask time first, (T, B), as nn.RNN's default layout.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "A cumulative sum of ones counts the positions 1..T; True where the count is at most "
        "the length.",
    ),
    BlindCase(
        CHECK,
        "python_loop_bool",
        mask_loop_bool,
        "correct",
        "A loop over the sentences that sets the first n entries of a bool zeros tensor.",
    ),
    BlindCase(
        CHECK,
        "lengths_greater_than_positions",
        mask_reversed_comparison,
        "correct",
        "lengths[:, None] > arange(T), written the other way round; an extra device argument "
        "with a default.",
    ),
    BlindCase(
        CHECK,
        "steps_table_lookup",
        mask_from_steps_table,
        "correct",
        "A (T + 1, T) table whose row n has n leading Trues, indexed by the lengths.",
    ),
]
