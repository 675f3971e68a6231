"""Blind set B25, check_causal_mask (chapter 12): the causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import BlindCase

CHECK = "check_causal_mask"


# ---------------------------------------------------------------- mistakes


def cm_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the upper triangle


def cm_blocked_future(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # True = the future


def cm_no_diagonal(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly the past


def cm_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def cm_float(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # ones on and below the diagonal


def cm_additive(T: int) -> Tensor:
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # 0 = attend, -inf = not


def cm_with_batch_and_head_axes(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T)


def cm_long(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def cm_key_before_query(T: int) -> Tensor:
    t = torch.arange(T)
    return t[:, None] <= t[None, :]  # key t' <= query t?


def cm_loop_stops_early(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T - 1):
        mask[t, : t + 1] = True
    return mask


_CACHED = torch.ones(64, 64, dtype=torch.bool).tril()  # built once for the longest sentence


def cm_cached_not_sliced(T: int) -> Tensor:
    return _CACHED if T <= 64 else torch.ones(T, T, dtype=torch.bool).tril()


def cm_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def cm_uint8(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.uint8).tril()


def cm_room_for_bos(T: int) -> Tensor:
    return torch.ones(T + 1, T + 1, dtype=torch.bool).tril()  # one more for <bos>


def cm_eye_plus_previous(T: int) -> Tensor:
    eye = torch.eye(T, dtype=torch.bool)
    return eye | eye.roll(-1, dims=1)  # itself and the word before


# ---------------------------------------------------------------- correct variants


def cm_arange_compare(T: int) -> Tensor:
    t = torch.arange(T)
    return t[None, :] <= t[:, None]  # key t' <= query t


def cm_not_future(T: int) -> Tensor:
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def cm_loop(T: int) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def cm_tril_indices(T: int, device: str | torch.device | None = None) -> Tensor:
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    rows, cols = torch.tril_indices(T, T, device=device)
    mask[rows, cols] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        cm_triu,
        "mistake",
        "I used triu instead of tril, so each query sees itself and the future.",
    ),
    BlindCase(
        CHECK,
        "true_at_future",
        cm_blocked_future,
        "mistake",
        "I built triu(diagonal=1), True at the future keys, as PyTorch's masks do.",
    ),
    BlindCase(
        CHECK,
        "diagonal_left_out",
        cm_no_diagonal,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot attend to its own position.",
    ),
    BlindCase(
        CHECK,
        "one_key_ahead",
        cm_one_ahead,
        "mistake",
        "I used tril(diagonal=1), so each query also sees the next token.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        cm_float,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 0s and 1s.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        cm_additive,
        "mistake",
        "I returned the additive mask, 0 below and -inf above the diagonal, from the notes.",
    ),
    BlindCase(
        CHECK,
        "batch_and_head_axes",
        cm_with_batch_and_head_axes,
        "mistake",
        "I returned it shaped (1, 1, T, T) to broadcast over batch and heads.",
    ),
    BlindCase(
        CHECK,
        "long_mask",
        cm_long,
        "mistake",
        "I built the triangle from a long tensor of ones.",
    ),
    BlindCase(
        CHECK,
        "comparison_reversed",
        cm_key_before_query,
        "mistake",
        "I compared t[:, None] <= t[None, :], which puts the keys on the rows.",
    ),
    BlindCase(
        CHECK,
        "loop_stops_early",
        cm_loop_stops_early,
        "mistake",
        "My loop ran over range(T - 1), so the last query sees nothing.",
    ),
    BlindCase(
        CHECK,
        "cached_not_sliced",
        cm_cached_not_sliced,
        "mistake",
        "I built a 64 x 64 mask once for the longest sentence and returned it without cutting it "
        "to T x T.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        cm_numpy,
        "mistake",
        "I returned np.tril of a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        cm_uint8,
        "mistake",
        "I used a uint8 tensor, as older PyTorch masks were.",
    ),
    BlindCase(
        CHECK,
        "room_for_bos",
        cm_room_for_bos,
        "mistake",
        "I made the mask (T + 1, T + 1), one more position for the <bos> in front.",
    ),
    BlindCase(
        CHECK,
        "itself_and_previous_only",
        cm_eye_plus_previous,
        "mistake",
        "I let each query see itself and the word just before it, nothing earlier.",
    ),
    BlindCase(
        CHECK,
        "arange_compare",
        cm_arange_compare,
        "correct",
        "arange(T) compared with itself: key index <= query index.",
    ),
    BlindCase(
        CHECK,
        "not_future",
        cm_not_future,
        "correct",
        "The negation of triu(diagonal=1).",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        cm_loop,
        "correct",
        "A Python loop setting row t True up to t.",
    ),
    BlindCase(
        CHECK,
        "tril_indices_with_device",
        cm_tril_indices,
        "correct",
        "torch.tril_indices written into a False mask; an optional device argument.",
    ),
]
