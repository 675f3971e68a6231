"""Blind set B27, check_causal_mask (chapter 12): the (T, T) causal mask as readers write it."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .. import BlindCase

CHECK = "check_causal_mask"

_TABLE = torch.ones(16, 16, dtype=torch.bool).tril()  # built once, sliced for each length


# ---------------------------------------------------------------- mistakes


def causal_triu(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu()  # the notes' upper triangle


def causal_future_true(T: int) -> Tensor:
    return torch.triu(torch.ones(T, T), diagonal=1) == 1  # True on the future


def causal_strict(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # the keys before t


def causal_one_ahead(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def causal_float_ones(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T))  # 1 = may attend, 0 = hidden


def causal_minus_inf(T: int) -> Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)  # PyTorch's own causal mask


def causal_uint8(T: int) -> Tensor:
    return torch.tril(torch.ones(T, T, dtype=torch.uint8))  # a byte mask


def causal_key_le_query_swapped(T: int) -> Tensor:
    t = torch.arange(T)
    return t[:, None] <= t[None, :]  # query t, key s: s <= t


def causal_strict_comparison(T: int) -> Tensor:
    t = torch.arange(T)
    return t[None, :] < t[:, None]  # the key comes before the query


def causal_batched(T: int) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()[None, None]  # (1, 1, T, T) for (B, H, T, T)


def causal_numpy(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))


def causal_cached_table(T: int) -> Tensor:
    return _TABLE[:T, :T]  # long enough for the sentences of this chapter


def causal_shifted_inputs(T: int) -> Tensor:
    n = T - 1  # the decoder reads <bos> y_1 .. y_{T-1}
    return torch.ones(n, n, dtype=torch.bool).tril()


# ---------------------------------------------------------------- correct variants


def causal_not_triu(T: int) -> Tensor:
    """Not strictly above the diagonal."""
    return ~torch.ones(T, T, dtype=torch.bool).triu(1)


def causal_arange_ge(T: int, device: torch.device | str | None = None) -> Tensor:
    """Key index <= query index, by broadcasting; an optional device."""
    idx = torch.arange(T, device=device)
    return idx.unsqueeze(1) >= idx.unsqueeze(0)


def causal_loop(T: int) -> Tensor:
    mask = torch.zeros((T, T), dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def causal_cumsum_eye(T: int) -> Tensor:
    """The identity's ones carried down each column by a cumulative sum."""
    return torch.eye(T, dtype=torch.long).cumsum(dim=0).bool()


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        causal_triu,
        "mistake",
        "I kept the upper triangle with triu(), as in the notes' matrix, so each query sees the "
        "future.",
    ),
    BlindCase(
        CHECK,
        "true_on_future",
        causal_future_true,
        "mistake",
        "I made the mask True on the future (triu(diagonal=1) == 1), the keys to block.",
    ),
    BlindCase(
        CHECK,
        "diagonal_excluded",
        causal_strict,
        "mistake",
        "I used tril(diagonal=-1), so a query cannot see its own position.",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        causal_one_ahead,
        "mistake",
        "I used tril(diagonal=1), thinking the diagonal needs the +1, so each query sees the "
        "next key.",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        causal_float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of 1s and 0s.",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        causal_minus_inf,
        "mistake",
        "I used nn.Transformer.generate_square_subsequent_mask, a float mask of 0 and -inf.",
    ),
    BlindCase(
        CHECK,
        "uint8_mask",
        causal_uint8,
        "mistake",
        "I built the mask as uint8, the byte masks older code uses.",
    ),
    BlindCase(
        CHECK,
        "comparison_transposed",
        causal_key_le_query_swapped,
        "mistake",
        "I compared t[:, None] <= t[None, :], which puts the keys on the rows.",
    ),
    BlindCase(
        CHECK,
        "strict_comparison",
        causal_strict_comparison,
        "mistake",
        "I compared with < instead of <=, so the diagonal is hidden.",
    ),
    BlindCase(
        CHECK,
        "batch_and_head_axes",
        causal_batched,
        "mistake",
        "I returned (1, 1, T, T) so it fits (B, H, T, T) scores.",
    ),
    BlindCase(
        CHECK,
        "numpy_array",
        causal_numpy,
        "mistake",
        "I returned np.tril of a NumPy array instead of a tensor.",
    ),
    BlindCase(
        CHECK,
        "cached_16_by_16",
        causal_cached_table,
        "mistake",
        "I built one 16 x 16 mask and slice it, so any T above 16 gets a 16 x 16 mask.",
    ),
    BlindCase(
        CHECK,
        "size_t_minus_one",
        causal_shifted_inputs,
        "mistake",
        "I made the mask (T - 1, T - 1), since the decoder reads the targets shifted by one.",
    ),
    BlindCase(
        CHECK,
        "not_strict_upper",
        causal_not_triu,
        "correct",
        "The negation of the strictly upper triangle, ~triu(1).",
    ),
    BlindCase(
        CHECK,
        "arange_ge_with_device",
        causal_arange_ge,
        "correct",
        "Query index >= key index by broadcasting two aranges; an optional device argument.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        causal_loop,
        "correct",
        "A zero bool mask and a loop that opens keys 0..t of each row.",
    ),
    BlindCase(
        CHECK,
        "cumsum_of_identity",
        causal_cumsum_eye,
        "correct",
        "torch.eye summed down the columns with cumsum, then .bool().",
    ),
]
