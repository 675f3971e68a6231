"""Blind set B12, check_causal_mask (chapter 12): the (T, T) causal mask, True = may attend."""

from __future__ import annotations

import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def causal_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # upper triangle, diagonal included


def causal_future_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def causal_no_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def causal_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)  # sees the next token too


def causal_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # ones below the diagonal


def causal_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # the old byte masks


def causal_additive(T: int) -> Tensor:
    mask = torch.full((T, T), float("-inf")).triu(1)  # 0 where allowed, -inf in the future
    return mask


def causal_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for the batch


def causal_strict_compare(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] > i[None, :]  # query after key


# ---------------------------------------------------------------- correct variants


def causal_arange(T: int) -> Tensor:
    i = torch.arange(T)
    return i.unsqueeze(1) >= i.unsqueeze(0)


def causal_not_future(T: int, device: str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(diagonal=1)


def causal_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def causal_float_then_bool(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T)).bool()


CASES = [
    BlindCase(
        CHECK,
        "triu",
        causal_triu,
        "mistake",
        "I used triu instead of tril, so every query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "future_true",
        causal_future_true,
        "mistake",
        "I marked the future with True (triu(1)), PyTorch's attn_mask polarity.",
    ),
    BlindCase(
        CHECK,
        "no_diagonal",
        causal_no_diagonal,
        "mistake",
        "I used tril(-1), so a token may not attend to itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        causal_one_ahead,
        "mistake",
        "I used tril(1), so each token also sees the next one.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask.",
    ),
    BlindCase(
        CHECK, "uint8", causal_uint8, "mistake", "I built it as uint8, as old PyTorch code did."
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        causal_additive,
        "mistake",
        "I returned the additive float mask (0 allowed, -inf future) of "
        "generate_square_subsequent_mask.",
    ),
    BlindCase(
        CHECK,
        "batched",
        causal_batched,
        "mistake",
        "I added a batch dimension and returned (1, T, T).",
    ),
    BlindCase(
        CHECK,
        "strict_compare",
        causal_strict_compare,
        "mistake",
        "I compared query > key with arange, which leaves out the diagonal.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        causal_arange,
        "correct",
        "query index >= key index, by broadcasting two aranges.",
    ),
    BlindCase(
        CHECK,
        "not_future",
        causal_not_future,
        "correct",
        "The negation of triu(1); an extra device argument with a default.",
    ),
    BlindCase(CHECK, "loop", causal_loop, "correct", "A loop filling row t up to t."),
    BlindCase(
        CHECK,
        "float_then_bool",
        causal_float_then_bool,
        "correct",
        "tril of float ones, turned into bool at the end.",
    ),
]
