"""Blind set B22, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"

# ---------------------------------------------------------------- mistakes


def cm_blocked_future(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = the future


def cm_strict(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)  # strictly the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(1)


def cm_upper(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1.0 may attend, 0.0 not


def cm_pytorch_additive(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # 0 / -inf


def cm_batch_dim(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T), broadcasts over B


def cm_strict_first_fixed(T: int) -> Tensor:
    mask = torch.ones(T, T, dtype=torch.bool).tril(-1)  # a token does not attend to itself
    if T > 0:
        mask[0, 0] = True  # but the first one needs something
    return mask


def cm_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_compare_reversed(T: int) -> Tensor:
    t = torch.arange(T)
    return t[:, None] <= t[None, :]  # query <= key


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    t = torch.arange(T)
    return t.unsqueeze(1) >= t.unsqueeze(0)  # query >= key


def cm_not_future(T: int, device: torch.device | str | None = None) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "blocked_future",
        cm_blocked_future,
        "mistake",
        "I marked the future with True (triu, diagonal=1).",
    ),
    BlindCase(
        CHECK, "strict", cm_strict, "mistake", "tril(diagonal=-1): no token may attend to itself."
    ),
    BlindCase(CHECK, "one_ahead", cm_one_ahead, "mistake", "tril(1): each token sees one ahead."),
    BlindCase(CHECK, "upper", cm_upper, "mistake", "I used triu() instead of tril()."),
    BlindCase(CHECK, "float", cm_float, "mistake", "I returned a float 1/0 mask."),
    BlindCase(
        CHECK,
        "pytorch_additive",
        cm_pytorch_additive,
        "mistake",
        "I returned nn.Transformer.generate_square_subsequent_mask (0 / -inf floats).",
    ),
    BlindCase(CHECK, "batch_dim", cm_batch_dim, "mistake", "I returned (1, T, T)."),
    BlindCase(
        CHECK,
        "strict_first_fixed",
        cm_strict_first_fixed,
        "mistake",
        "I excluded the diagonal and only let the first token see itself.",
    ),
    BlindCase(CHECK, "uint8", cm_uint8, "mistake", "I returned a uint8 mask."),
    BlindCase(CHECK, "numpy", cm_numpy, "mistake", "I returned a NumPy array."),
    BlindCase(
        CHECK,
        "compare_reversed",
        cm_compare_reversed,
        "mistake",
        "I compared query <= key with arange.",
    ),
    BlindCase(
        CHECK, "arange", cm_arange, "correct", "Comparing arange(T) with itself: query >= key."
    ),
    BlindCase(
        CHECK,
        "not_future",
        cm_not_future,
        "correct",
        "The negation of triu(1), with an optional device argument.",
    ),
    BlindCase(CHECK, "loop", cm_loop, "correct", "A loop setting row t's first t+1 entries."),
]
