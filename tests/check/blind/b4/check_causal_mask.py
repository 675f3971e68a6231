"""Blind cases for check_causal_mask (chapter 12), written from the chapter's text only."""

from __future__ import annotations

import torch

from .. import BlindCase

CHECK = "check_causal_mask"


def upper_triangle(T):
    return torch.ones(T, T, dtype=torch.bool).triu()


def strictly_below(T):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)


def true_on_future(T):
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def float_ones(T):
    return torch.tril(torch.ones(T, T))


def additive_minus_inf(T):
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)


def one_step_ahead(T):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def with_batch_axis(T):
    return torch.ones(T, T, dtype=torch.bool).tril().unsqueeze(0)


def compare_positions(T):
    i = torch.arange(T)
    return i[None, :] <= i[:, None]  # key j <= query i


def not_the_future(T, device=None):
    future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
    return ~future


def row_by_row(T):
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


CASES = [
    BlindCase(
        CHECK,
        "upper_triangle",
        upper_triangle,
        "mistake",
        "I used triu instead of tril",
    ),
    BlindCase(
        CHECK,
        "strictly_below",
        strictly_below,
        "mistake",
        "I used tril(diagonal=-1), so a token cannot see itself",
    ),
    BlindCase(
        CHECK,
        "true_on_future",
        true_on_future,
        "mistake",
        "I built PyTorch's mask, True on the future keys to block",
    ),
    BlindCase(
        CHECK,
        "float_ones",
        float_ones,
        "mistake",
        "I returned torch.tril(torch.ones(T, T)), a float mask of ones and zeros",
    ),
    BlindCase(
        CHECK,
        "additive_minus_inf",
        additive_minus_inf,
        "mistake",
        "I returned the additive mask from the notes: -inf above the diagonal, 0 elsewhere",
    ),
    BlindCase(
        CHECK,
        "one_step_ahead",
        one_step_ahead,
        "mistake",
        "I used tril(diagonal=1), thinking the diagonal argument counts from 1",
    ),
    BlindCase(
        CHECK,
        "with_batch_axis",
        with_batch_axis,
        "mistake",
        "I added a batch axis, (1, T, T), so that it broadcasts over the batch",
    ),
    BlindCase(
        CHECK,
        "compare_positions",
        compare_positions,
        "correct",
        "I compared key and query positions with arange: j <= i",
    ),
    BlindCase(
        CHECK,
        "not_the_future",
        not_the_future,
        "correct",
        "I negated triu(1), the future; an optional device argument",
    ),
    BlindCase(
        CHECK,
        "row_by_row",
        row_by_row,
        "correct",
        "I set the first t + 1 entries of row t to True in a loop",
    ),
]
