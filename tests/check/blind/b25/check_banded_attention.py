"""Blind set B25, check_banded_attention (chapter 20): local attention in a band of frames as
readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None) -> Tensor:
    """Right masked attention: ``allowed`` broadcasts to (B, H, T, T); empty rows give zeros."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    allowed = allowed.expand_as(scores)
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _keys(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict_inequality(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _keys(key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        end = t if causal else t + window
        for s in range(max(0, t - window), min(T, end)):  # the frames from t - w to t + w
            band[t, s] = True
    return _attend(q, k, v, band & _keys(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.triu(0).tril(window) if causal else ones.tril(window).triu(-window)
    return _attend(q, k, v, band & _keys(key_padding))


def band_causal_flag_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    return _attend(q, k, v, band & _keys(key_padding))


def band_window_is_width(q, k, v, window, causal=False, key_padding=None):
    half = window // 2  # the window is the width of the band, half on each side
    d = _offsets(q.shape[2], q.device)
    band = (d <= half) & (d >= (0 if causal else -half))
    return _attend(q, k, v, band & _keys(key_padding))


def band_triu_sign(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(window)  # between the two diagonals
    return _attend(q, k, v, band & _keys(key_padding))


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # distance along the sequence, modulo T
    band = d <= window if causal else (d <= window) | ((-_offsets(T, q.device)) % T <= window)
    return _attend(q, k, v, band & _keys(key_padding))


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = torch.ones(q.shape[2], q.shape[2], dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # padding frames are not used
    return _attend(q, k, v, band)


def band_padding_true_is_pad(q, k, v, window, causal=False, key_padding=None):
    band = torch.ones(q.shape[2], q.shape[2], dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True marks the padding
    return _attend(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    band = band.triu(-window) & _keys(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~band, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    band = band.triu(-window) & _keys(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~band, -1e9)
    return torch.softmax(scores, dim=-1) @ v


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    band = band.triu(-window) & _keys(key_padding)
    return _attend(q, k, v, band, scale=1.0 / math.sqrt(v.shape[-1]))


def band_returns_weights_too(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    band = band.triu(-window) & _keys(key_padding)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~band, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return weights @ v, weights  # as chapter 6's attention


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    offsets = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offsets).clamp(0, T - 1)  # (T, W)
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q.unsqueeze(-2) * k_win).sum(-1) / math.sqrt(q.shape[-1])  # (B, H, T, W)
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    allowed = real[:, idx][:, None]  # (B, 1, T, W)
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return (weights.unsqueeze(-1) * v_win).sum(-2)


# ---------------------------------------------------------------- correct variants


def band_loop_over_frames(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    B, H, T, Dh = q.shape
    rows = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = torch.einsum("bhd,bhsd->bhs", q[:, :, t], k[:, :, lo:hi]) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, None, lo:hi].expand_as(scores)
        else:
            real = torch.ones_like(scores, dtype=torch.bool)
        scores = scores.masked_fill(~real, float("-inf"))
        any_key = real.any(-1, keepdim=True)
        weights = torch.where(any_key, scores, torch.zeros_like(scores)).softmax(-1)
        weights = weights * any_key
        rows.append(torch.einsum("bhs,bhsd->bhd", weights, v[:, :, lo:hi]))
    return torch.stack(rows, dim=2)


def band_sdpa_then_zero(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    T = q.shape[2]
    d = _offsets(T, q.device)
    band = (d <= window) & (d >= (0 if causal else -window))  # (T, T)
    allowed = band.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    empty = ~allowed.any(-1, keepdim=True)  # (B, 1, T, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed | empty)
    return out.masked_fill(empty, 0.0)


def band_unfolded_window(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    """Only the 2w + 1 keys around each frame, through a padded unfold; optional scale."""
    B, H, T, Dh = q.shape
    W = 2 * window + 1
    scale = Dh**-0.5 if scale is None else scale
    k_win = F.pad(k, (0, 0, window, window)).unfold(2, W, 1)  # (B, H, T, Dh, W)
    v_win = F.pad(v, (0, 0, window, window)).unfold(2, W, 1)  # (B, H, T, Dv, W)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, k_win) * scale
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    real_win = F.pad(real, (window, window), value=False).unfold(1, W, 1)  # (B, T, W)
    offset = torch.arange(W, device=q.device) - window  # s - t
    ok = real_win[:, None] & (
        (offset <= 0) if causal else torch.ones_like(offset, dtype=torch.bool)
    )
    scores = scores.masked_fill(~ok, float("-inf"))
    any_key = ok.any(-1, keepdim=True)
    weights = scores.masked_fill(~any_key, 0.0).softmax(-1).masked_fill(~any_key, 0.0)
    return torch.einsum("bhtw,bhtdw->bhtd", weights, v_win)


CASES = [
    BlindCase(
        CHECK,
        "strict_inequality",
        band_strict_inequality,
        "mistake",
        "I used |t - s| < window for the band, so it is one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I filled the mask with a loop over range(t - w, t + w) (range(t - w, t) when causal), "
        "which leaves out the last frame of each band.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept the frames from t to t + w, with triu(0).tril(w).",
    ),
    BlindCase(
        CHECK,
        "causal_flag_ignored",
        band_causal_flag_ignored,
        "mistake",
        "I built the two-sided band and forgot to use the causal argument.",
    ),
    BlindCase(
        CHECK,
        "window_read_as_width",
        band_window_is_width,
        "mistake",
        "I read window as the width of the band and used window // 2 on each side.",
    ),
    BlindCase(
        CHECK,
        "triu_positive_diagonal",
        band_triu_sign,
        "mistake",
        "I wrote triu(window) instead of triu(-window), so only one diagonal of the band stays.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance between frames modulo T, so the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I put the padding mask along the query axis, key_padding[:, None, :, None].",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_true_is_pad,
        "mistake",
        "I treated True in key_padding as the padding, as nn.MultiheadAttention does.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_frame",
        band_nan_rows,
        "mistake",
        "Plain softmax after filling -inf, so a frame whose keys are all padding gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled the hidden scores with -1e9, so a frame that sees no key averages every "
        "value instead of getting zeros.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt of the last dimension of v instead of q's.",
    ),
    BlindCase(
        CHECK,
        "returns_output_and_weights",
        band_returns_weights_too,
        "mistake",
        "I returned (out, weights) as the attention of chapter 6 does, not only the output.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped_at_ends",
        band_clamped_indices,
        "mistake",
        "I gathered the 2w + 1 neighbours with indices clamped to 0 .. T - 1, so the first and "
        "last frames count the edge frame several times.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_loop_over_frames,
        "correct",
        "A loop over the frames, each attending to its slice of keys with einsum.",
    ),
    BlindCase(
        CHECK,
        "sdpa_then_zero_rows",
        band_sdpa_then_zero,
        "correct",
        "The band from an arange of offsets, F.scaled_dot_product_attention with a boolean "
        "mask, rows without keys opened and then set to zero.",
    ),
    BlindCase(
        CHECK,
        "unfolded_window",
        band_unfolded_window,
        "correct",
        "Only the 2w + 1 neighbours through a padded unfold of k, v and the padding; an extra "
        "scale argument.",
    ),
]
