"""Blind set B22, check_padding_mask (chapter 1): the (B, T) real-token mask as readers write it."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_padding_mask"


def _width(lengths: Tensor, max_len: int | None) -> int:
    return int(lengths.max()) if max_len is None else max_len


# ---------------------------------------------------------------- mistakes


def mask_inverted(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] >= lengths[:, None]  # True = padding


def mask_long(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).long()  # 1/0, easy to multiply


def mask_less_equal(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[None, :] <= lengths[:, None]


def mask_transposed(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return torch.arange(T)[:, None] < lengths[None, :]  # (T, B)


def mask_ignores_max_len(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max())
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_positions_from_one(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    positions = torch.arange(1, T + 1)  # positions 1..T
    return positions[None, :] < lengths[:, None]


def mask_width_is_batch(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len or len(lengths)  # the number of sequences
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_width_of_first(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else int(lengths[0])  # batches come sorted, longest first
    return torch.arange(T)[None, :] < lengths[:, None]


def mask_for_attention(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).unsqueeze(1)  # (B, 1, T)


def mask_uint8(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    return (torch.arange(T)[None, :] < lengths[:, None]).to(torch.uint8)


def mask_edits_lengths(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = _width(lengths, max_len)
    lengths -= 1  # last real index
    return torch.arange(T)[None, :] <= lengths[:, None]


# ---------------------------------------------------------------- correct variants


def mask_loop(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = int(lengths.max()) if max_len is None else max_len
    mask = torch.zeros(len(lengths), T, dtype=torch.bool)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask


def mask_not_ge(lengths: Tensor, max_len: int | None = None) -> Tensor:
    T = max_len if max_len is not None else lengths.max().item()
    return ~(torch.arange(T, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(1))


def mask_expand(
    lengths: Tensor, max_len: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    lengths = torch.as_tensor(lengths, device=device)
    T = max_len if max_len is not None else int(lengths.max())
    positions = torch.arange(T, device=lengths.device).expand(len(lengths), T)
    return lengths.unsqueeze(-1) > positions


CASES = [
    BlindCase(
        CHECK,
        "inverted",
        mask_inverted,
        "mistake",
        "My mask is True on the padding, False on real tokens.",
    ),
    BlindCase(
        CHECK,
        "long_ints",
        mask_long,
        "mistake",
        "I returned 1/0 as a long tensor so I can multiply with it.",
    ),
    BlindCase(
        CHECK,
        "less_equal",
        mask_less_equal,
        "mistake",
        "I compared positions <= lengths, one real token too many.",
    ),
    BlindCase(
        CHECK,
        "transposed",
        mask_transposed,
        "mistake",
        "I broadcast the other way round and got (T, B).",
    ),
    BlindCase(
        CHECK,
        "ignores_max_len",
        mask_ignores_max_len,
        "mistake",
        "I always used max(lengths) as the width and forgot max_len.",
    ),
    BlindCase(
        CHECK,
        "positions_from_one",
        mask_positions_from_one,
        "mistake",
        "I numbered positions 1..T and kept <, so each row has one True too few.",
    ),
    BlindCase(
        CHECK,
        "width_is_batch",
        mask_width_is_batch,
        "mistake",
        "I took len(lengths) (the batch size) as the width.",
    ),
    BlindCase(
        CHECK,
        "width_of_first",
        mask_width_of_first,
        "mistake",
        "I assumed sorted lengths and used lengths[0] as the width.",
    ),
    BlindCase(
        CHECK,
        "for_attention",
        mask_for_attention,
        "mistake",
        "I returned it as (B, 1, T), ready for attention.",
    ),
    BlindCase(
        CHECK,
        "uint8",
        mask_uint8,
        "mistake",
        "I returned a uint8 (byte) mask, as old PyTorch code does.",
    ),
    BlindCase(
        CHECK,
        "edits_lengths",
        mask_edits_lengths,
        "mistake",
        "I did lengths -= 1 to get the last index, which changes the caller's lengths.",
    ),
    BlindCase(
        CHECK,
        "loop",
        mask_loop,
        "correct",
        "A bool zeros tensor with each row's first n entries set to True in a loop.",
    ),
    BlindCase(CHECK, "not_ge", mask_not_ge, "correct", "The negation of positions >= lengths."),
    BlindCase(
        CHECK,
        "expand_gt",
        mask_expand,
        "correct",
        "lengths > expanded positions, with an extra optional device argument.",
    ),
]
