"""Blind set B8, check_padding_mask (chapter 1): the (B, T) mask of real tokens."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


# ---------------------------------------------------------------- mistakes


def mask_true_on_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] >= lengths[:, None]  # like key_padding_mask


def mask_as_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_time_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def max_len_ignored(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def forgot_unsqueeze_lengths(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return torch.arange(T)[None, :] < lengths  # (1, T) vs (B,): only works when B == 1 or T


def loop_slice_minus_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, : n - 1] = True  # "last index is n - 1"
    return mask


def mask_uint8(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).to(torch.uint8)  # ByteTensor mask


def mask_with_attention_dims(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return mask[:, None, None, :]  # ready for (B, H, T_q, T_k) scores


def mask_as_float(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return (torch.arange(T)[None, :] < lengths[:, None]).float()


def numpy_mask(lengths: Tensor, max_len: int | None = None) -> np.ndarray:
    lengths = np.asarray(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    return np.arange(T)[None, :] < lengths[:, None]


# ---------------------------------------------------------------- correct variants


def loop_rows(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def expand_then_compare(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = max_len if max_len is not None else int(lengths.max().item())
    positions = torch.arange(T).expand(len(lengths), T)  # (B, T)
    return positions < lengths.unsqueeze(1)


def not_of_padding(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    is_pad = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(-1)
    return ~is_pad


def cumsum_counter(lengths: Tensor, max_len: int | None = None) -> Tensor:
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max()) if max_len is None else max_len
    count = torch.ones(len(lengths), T, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., T
    return count <= lengths[:, None]


CASES = [
    BlindCase(
        CHECK,
        "mask_true_on_padding",
        mask_true_on_padding,
        "mistake",
        "I made the mask True on the padding (>=), like nn.MultiheadAttention's key_padding_mask",
    ),
    BlindCase(
        CHECK,
        "mask_as_long",
        mask_as_long,
        "mistake",
        "I converted the mask with .long() so it is 0/1 integers, not bools",
    ),
    BlindCase(
        CHECK,
        "mask_less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, so one padding position too many is True",
    ),
    BlindCase(
        CHECK,
        "mask_time_first",
        mask_time_first,
        "mistake",
        "I built it as arange(T)[:, None] < lengths[None, :], which is (T, B)",
    ),
    BlindCase(
        CHECK,
        "max_len_ignored",
        max_len_ignored,
        "mistake",
        "I always used max(lengths) as the width and ignored max_len",
    ),
    BlindCase(
        CHECK,
        "forgot_unsqueeze_lengths",
        forgot_unsqueeze_lengths,
        "mistake",
        "I compared arange(T)[None, :] < lengths without lengths[:, None], so it only "
        "broadcasts for a batch of one",
    ),
    BlindCase(
        CHECK,
        "loop_slice_minus_one",
        loop_slice_minus_one,
        "mistake",
        "in my loop I set mask[b, :n - 1] = True, thinking the last index is n - 1",
    ),
    BlindCase(
        CHECK,
        "mask_uint8",
        mask_uint8,
        "mistake",
        "I returned a uint8 (ByteTensor) mask as older tutorials do",
    ),
    BlindCase(
        CHECK,
        "mask_with_attention_dims",
        mask_with_attention_dims,
        "mistake",
        "I returned the mask already reshaped to (B, 1, 1, T) for the attention scores",
    ),
    BlindCase(
        CHECK,
        "mask_as_float",
        mask_as_float,
        "mistake",
        "I returned a float 0./1. mask so I could multiply with it",
    ),
    BlindCase(
        CHECK,
        "numpy_mask",
        numpy_mask,
        "mistake",
        "I wrote it in NumPy and returned a numpy array, not a tensor",
    ),
    BlindCase(
        CHECK,
        "loop_rows",
        loop_rows,
        "correct",
        "a Python loop that sets mask[b, :n] = True on a zeros bool tensor",
    ),
    BlindCase(
        CHECK,
        "expand_then_compare",
        expand_then_compare,
        "correct",
        "arange(T).expand(B, T) compared with lengths.unsqueeze(1)",
    ),
    BlindCase(
        CHECK,
        "not_of_padding",
        not_of_padding,
        "correct",
        "computed where the padding is (>=) and returned its negation",
    ),
    BlindCase(
        CHECK,
        "cumsum_counter",
        cumsum_counter,
        "correct",
        "a 1..T counter from cumsum of ones, compared <= lengths",
    ),
]
