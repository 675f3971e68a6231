"""Blind set B26, check_padding_mask (chapter 1): the (B, T) mask of real tokens as readers write it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # marks the padding


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).float()  # ready to multiply with


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_is_batch_size(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = len(lengths) if max_len is None else max_len  # one column per sequence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_feature_axis(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[..., None]  # (B, T, 1) so that it multiplies (B, T, F) vectors


def mask_wrong_keyword(lengths: Tensor, T: int | None = None) -> Tensor:
    T = int(lengths.max()) if T is None else T
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_lengths_not_unsqueezed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T).unsqueeze(0) < lengths  # (1, T) against (B,)


def mask_loop_reuses_row(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    row = torch.zeros(T, dtype=torch.bool)
    rows = []
    for n in lengths.tolist():
        row[:n] = True  # the same row tensor every time
        rows.append(row)
    return torch.stack(rows)


def mask_longest_row_all_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.arange(T)[None, :] < lengths[:, None]
    mask[:, -1] = False  # the last column is where the padding is
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b in range(len(lengths)):
        mask[b, : int(lengths[b])] = True
    return mask


def mask_cumsum(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max().item()) if max_len is None else int(max_len)
    counts = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return counts <= lengths.unsqueeze(1)


def mask_expand(lengths: Tensor, max_len: int | None = None, device=None) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = max_len if max_len is not None else int(lengths.max())
    grid = torch.arange(T, device=lengths.device).expand(len(lengths), T)  # (B, T)
    return grid.lt(lengths.view(-1, 1))


def mask_from_ones(lengths: Tensor, max_len: int | None = None) -> Tensor:
    rows = [torch.ones(int(n), dtype=torch.long) for n in lengths]
    longest = max(int(n) for n in lengths)
    T = longest if max_len is None else max_len
    return torch.stack([F.pad(r, (0, T - len(r))) for r in rows]).bool()


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "My mask is True on the padding (positions >= length), the polarity of key_padding_mask.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I return the mask as floats (1.0 / 0.0) so that it can multiply the vectors directly.",
    ),
    BlindCase(
        CHECK,
        "less_or_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= length, so one padding cell per row counts as real.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered the positions 1..T, so each row loses its last real token.",
    ),
    BlindCase(
        CHECK,
        "time_first",
        mask_time_first,
        "mistake",
        "I put the positions on the rows and the sequences on the columns: (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always made the mask as wide as the longest length and never used max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch_size",
        mask_width_is_batch_size,
        "mistake",
        "Without max_len I took len(lengths) as the width, mixing up B and T.",
    ),
    BlindCase(
        CHECK,
        "feature_axis_added",
        mask_feature_axis,
        "mistake",
        "I return the mask with a trailing axis, (B, T, 1), as the masked mean uses it.",
    ),
    BlindCase(
        CHECK,
        "keyword_T",
        mask_wrong_keyword,
        "mistake",
        "I called the second argument T instead of max_len.",
    ),
    BlindCase(
        CHECK,
        "lengths_not_unsqueezed",
        mask_lengths_not_unsqueezed,
        "mistake",
        "I compared arange(T)[None, :] with lengths without lengths[:, None].",
    ),
    BlindCase(
        CHECK,
        "loop_reuses_one_row",
        mask_loop_reuses_row,
        "mistake",
        "In my loop I filled one row tensor and appended it for every sequence, so all rows "
        "end up the same.",
    ),
    BlindCase(
        CHECK,
        "last_column_false",
        mask_longest_row_all_padding,
        "mistake",
        "I set the last column to False since that is where padding goes, which also hides the "
        "last token of the longest row.",
    ),
    BlindCase(
        CHECK,
        "row_loop",
        mask_loop,
        "correct",
        "A bool zeros tensor and a loop that sets the first lengths[b] cells of each row.",
    ),
    BlindCase(
        CHECK,
        "cumsum_counts",
        mask_cumsum,
        "correct",
        "A cumsum of ones counts 1..T in each row; the mask is counts <= length.",
    ),
    BlindCase(
        CHECK,
        "expand_with_device",
        mask_expand,
        "correct",
        "arange(T).expand(B, T).lt(lengths.view(-1, 1)), with an extra device argument.",
    ),
    BlindCase(
        CHECK,
        "padded_rows_of_ones",
        mask_from_ones,
        "correct",
        "A row of ones per sequence, padded with zeros to T and stacked, then turned to bool.",
    ),
]
