"""Blind set B15, check_causal_mask (chapter 12): the (T, T) causal mask."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()


def cm_inverted(T: int) -> Tensor:
    return ~torch.ones(T, T, dtype=torch.bool).tril()


def cm_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(-1)  # the past only


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))


def cm_pytorch_style(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(1)  # True = blocked


def cm_long(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def cm_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)  # (1, T, T) for batches


def cm_generate_square(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # float 0 / -inf


def cm_compare_wrong(T: int) -> Tensor:
    i = torch.arange(T)
    return i[:, None] <= i[None, :]  # key >= query


# ---------------------------------------------------------------- correct variants


def cm_arange(T: int) -> Tensor:
    i = torch.arange(T)
    return i[None, :] <= i[:, None]


def cm_not_triu(T: int, device: str | None = None) -> Tensor:
    """~triu(1); an extra device argument."""
    return ~torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


def cm_numpy(T: int) -> Tensor:
    return torch.from_numpy(np.tri(T, dtype=bool))


CASES = [
    BlindCase(CHECK, "triu", cm_triu, "mistake", "I used triu, so queries see the future."),
    BlindCase(
        CHECK, "inverted", cm_inverted, "mistake", "I inverted the triangle: True where blocked."
    ),
    BlindCase(
        CHECK,
        "strict_lower",
        cm_strict,
        "mistake",
        "I used tril(-1), so a query does not see itself.",
    ),
    BlindCase(
        CHECK,
        "one_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(1), letting each query see the next token.",
    ),
    BlindCase(CHECK, "float_mask", cm_float, "mistake", "My mask is float 0/1."),
    BlindCase(
        CHECK,
        "pytorch_polarity",
        cm_pytorch_style,
        "mistake",
        "I used triu(1) as in PyTorch, True = blocked.",
    ),
    BlindCase(CHECK, "long_mask", cm_long, "mistake", "My mask is long 0/1 integers."),
    BlindCase(
        CHECK,
        "batched_shape",
        cm_batched,
        "mistake",
        "I returned (1, T, T) to broadcast over batches.",
    ),
    BlindCase(
        CHECK,
        "generate_square",
        cm_generate_square,
        "mistake",
        "I used nn.Transformer.generate_square_subsequent_mask (float, -inf above).",
    ),
    BlindCase(
        CHECK,
        "comparison_flipped",
        cm_compare_wrong,
        "mistake",
        "I compared query <= key, which is the transposed mask.",
    ),
    BlindCase(CHECK, "arange_compare", cm_arange, "correct", "key <= query with arange."),
    BlindCase(
        CHECK,
        "not_triu_device",
        cm_not_triu,
        "correct",
        "~triu(1); an extra device argument with default None.",
    ),
    BlindCase(CHECK, "numpy_tri", cm_numpy, "correct", "np.tri(T, dtype=bool) to torch."),
]
