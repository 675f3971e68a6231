"""Blind set B12, check_padding_mask (chapter 1): the boolean mask of the real tokens."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True marks the padding


def mask_ints(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1/0 to multiply with


def mask_off_by_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]  # positions 0..L inclusive


def mask_off_by_one_short(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(1, T + 1)[None, :] < lengths[:, None]  # counted positions from 1


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())  # max_len only matters for pad_sequences
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or len(lengths)  # one column per sequence
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = 1.0
    return mask


def mask_right_aligned(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, T - n :] = True  # the real tokens at the end of the row
    return mask


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(max(lengths))
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, : int(n)] = True
    return mask


def mask_expand(lengths: Tensor, max_len: int | None = None, device=None) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = max_len if max_len is not None else int(lengths.max().item())
    return torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths.view(-1, 1)


def mask_not_ge(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(T).unsqueeze(0)
    return ~(positions >= lengths.unsqueeze(1))


CASES = [
    BlindCase(
        CHECK,
        "true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True at the padding, as PyTorch's key_padding_mask does.",
    ),
    BlindCase(
        CHECK,
        "integer_mask",
        mask_ints,
        "mistake",
        "I returned a 0/1 long tensor so it can be multiplied with the loss.",
    ),
    BlindCase(
        CHECK,
        "one_too_many",
        mask_off_by_one,
        "mistake",
        "I used <= lengths, so one padding position per row is marked real.",
    ),
    BlindCase(
        CHECK,
        "one_too_few",
        mask_off_by_one_short,
        "mistake",
        "I numbered the positions from 1, so the last real token is marked padding.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got a (T, B) mask.",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and ignored max_len.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch",
        mask_width_batch,
        "mistake",
        "I used len(lengths), the number of sentences, as the width when max_len is None.",
    ),
    BlindCase(
        CHECK,
        "float_mask",
        mask_float,
        "mistake",
        "I filled a torch.zeros float tensor with 1.0 at the real tokens.",
    ),
    BlindCase(
        CHECK,
        "right_aligned",
        mask_right_aligned,
        "mistake",
        "I marked the last lengths[b] positions of each row instead of the first ones.",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A Python loop over the rows writing True into a zero bool tensor.",
    ),
    BlindCase(
        CHECK,
        "expand_view",
        mask_expand,
        "correct",
        "arange expanded to (B, T) against lengths.view(-1, 1); accepts lists and an extra "
        "device argument with a default.",
    ),
    BlindCase(CHECK, "not_ge", mask_not_ge, "correct", "The negation of positions >= lengths."),
]
