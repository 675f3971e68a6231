"""Blind set B24, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _softmax_zero_rows(scores: Tensor, allowed: Tensor) -> Tensor:
    """A right masked softmax: zero weights (and zero gradients) for a row with no key."""
    any_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~any_key, 0.0)
    return scores.softmax(-1).masked_fill(~any_key, 0.0)


def _offsets(T: int, device) -> Tensor:
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]  # (T, T): t - s


def _full(q, k, v, band: Tensor, key_padding, scale: float | None = None) -> Tensor:
    allowed = band[None, None]  # (1, 1, T, T)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    return _softmax_zero_rows(scores, allowed) @ v


def _band(T: int, window: int, causal: bool, device) -> Tensor:
    d = _offsets(T, device)
    band = d.abs() <= window
    return band & (d >= 0) if causal else band


# ---------------------------------------------------------------- mistakes


def banded_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() < window
    if causal:
        band &= d >= 0
    return _full(q, k, v, band, key_padding)


def banded_too_wide(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window + 1).triu(-window - 1)  # window on each side
    return _full(q, k, v, band, key_padding)


def banded_loop_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        last = t if causal else min(T - 1, t + window)
        for s in range(max(0, t - window), last):  # up to last
            band[t, s] = True
    return _full(q, k, v, band, key_padding)


def banded_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) & (d <= window)  # a frame attends to its past window
    return _full(q, k, v, band, key_padding)


def banded_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    return _full(q, k, v, d.abs() <= window, key_padding)


def banded_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d <= 0)  # s - t ... I mixed up which index is the key
    return _full(q, k, v, band, key_padding)


def banded_zero_padded_windows(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    k_pad = F.pad(k, (0, 0, w, w))  # (B, H, T + 2w, Dh), zeros beyond the ends
    v_pad = F.pad(v, (0, 0, w, w))
    k_win = k_pad.unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1)
    v_win = v_pad.unfold(2, 2 * w + 1, 1)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, k_win) / math.sqrt(Dh)
    offset = torch.arange(-w, w + 1, device=q.device)  # s - t for each slot
    allowed = torch.ones(B, 1, T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed & (offset <= 0)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        allowed = allowed & real[:, None]
    weights = _softmax_zero_rows(scores, allowed)
    return torch.einsum("bhtw,bhtdw->bhtd", weights, v_win)


def banded_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    offset = torch.arange(-w, w + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offset).clamp(0, T - 1)  # (T, 2w+1)
    k_win = k[:, :, idx]  # (B, H, T, 2w+1, Dh)
    v_win = v[:, :, idx]
    scores = (q[:, :, :, None, :] * k_win).sum(-1) / math.sqrt(Dh)
    allowed = torch.ones(T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        allowed = allowed & (offset <= 0)
    allowed = allowed[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, idx][:, None]
    weights = _softmax_zero_rows(scores, allowed)
    return (weights[..., None] * v_win).sum(-2)


def banded_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T, q.device) % T  # distance around the circle
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band &= (d <= window) & (d >= 0)
    return _full(q, k, v, band, key_padding)


def banded_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[-2], window, causal, q.device)
    return _full(q, k, v, band, None)


def banded_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[-2], window, causal, q.device)
    return _full(q, k, v, band, None if key_padding is None else ~key_padding)


def banded_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[-2], window, causal, q.device)[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, :, None]  # (B, 1, T, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax_zero_rows(scores, allowed) @ v


def banded_nan_rows(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[-2], window, causal, q.device)[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def banded_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[-2], window, causal, q.device)[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, -1e9)
    return torch.softmax(scores, dim=-1) @ v


def banded_no_scale(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[-2], window, causal, q.device)
    return _full(q, k, v, band, key_padding, scale=1.0)


# ---------------------------------------------------------------- correct variants


def banded_full_where(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """The band from |t - s| by broadcasting; torch.where with -inf; NaN rows set to zero."""
    T = q.size(-2)
    t = torch.arange(T, device=q.device).view(T, 1)
    s = torch.arange(T, device=q.device).view(1, T)
    ok = (t - s).abs() <= window
    if causal:
        ok = ok & (s <= t)
    ok = ok.expand(q.size(0), 1, T, T)
    if key_padding is not None:
        ok = ok & key_padding.view(q.size(0), 1, 1, T)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / q.size(-1) ** 0.5
    scores = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
    empty = ~ok.any(-1, keepdim=True)
    scores = torch.where(empty, torch.zeros_like(scores), scores)
    weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def banded_loop_over_frames(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """A loop over the frames: each attends to its slice of keys, padding masked inside."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) / math.sqrt(Dh)
        if key_padding is None:
            allowed = torch.ones(B, 1, 1, hi - lo, dtype=torch.bool, device=q.device)
        else:
            allowed = key_padding[:, None, None, lo:hi]
        weights = _softmax_zero_rows(scores, allowed.expand_as(scores))
        outs.append(weights @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def banded_sliding_windows(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Windows of 2w + 1 keys by unfold, the slots beyond the ends masked out: O(T w)."""
    B, H, T, Dh = q.shape
    w = window
    k_win = F.pad(k, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1)
    v_win = F.pad(v, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dv, 2w+1)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, k_win) / math.sqrt(Dh)
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    real = F.pad(real, (w, w), value=False).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
    allowed = real[:, None]
    if causal:
        allowed = allowed & (torch.arange(-w, w + 1, device=q.device) <= 0)
    weights = _softmax_zero_rows(scores, allowed.expand_as(scores))
    return torch.einsum("bhtw,bhtdw->bhtd", weights, v_win)


def banded_sdpa_guarded(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention with the band as a boolean mask; empty rows fixed."""
    T = q.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device)
    mask = mask.tril(0 if causal else window).triu(-window)[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    has_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out.masked_fill(~has_key, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_one_too_narrow",
        banded_too_narrow,
        "mistake",
        "|t - s| < window instead of <=.",
    ),
    BlindCase(
        CHECK,
        "band_one_too_wide",
        banded_too_wide,
        "mistake",
        "tril(window + 1).triu(-window - 1), thinking the diagonal offsets exclude the edge.",
    ),
    BlindCase(
        CHECK,
        "loop_end_left_out",
        banded_loop_end_left_out,
        "mistake",
        "range(max(0, t - w), last) with last the final key: the last key is never included.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        banded_always_causal,
        "mistake",
        "My band is 0 <= t - s <= w whatever causal says.",
    ),
    BlindCase(
        CHECK,
        "causal_flag_ignored",
        banded_causal_ignored,
        "mistake",
        "causal is accepted but the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        banded_causal_looks_ahead,
        "mistake",
        "For causal I kept t - s <= 0: the frames ahead instead of behind.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted_as_keys",
        banded_zero_padded_windows,
        "mistake",
        "Sliding windows over keys padded with zeros by w; the slots beyond the ends are not "
        "masked, so they count as keys with score 0.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        banded_clamped_indices,
        "mistake",
        "Gathered keys at t + offset clamped into 0 .. T - 1, so the edge frame is repeated.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        banded_wraps_around,
        "mistake",
        "The distance taken modulo T, so the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        banded_padding_ignored,
        "mistake",
        "key_padding is accepted and never used.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        banded_padding_inverted,
        "mistake",
        "I passed ~key_padding, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        banded_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: the padded frames ask nothing instead of being hidden.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        banded_nan_rows,
        "mistake",
        "masked_fill with -inf and a plain softmax: a frame that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        banded_fill_minus_1e9,
        "mistake",
        "masked_fill with -1e9, so a frame that sees no key averages every value.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        banded_no_scale,
        "mistake",
        "I forgot the 1 / sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "full_attention_torch_where",
        banded_full_where,
        "correct",
        "Offsets by broadcasting, einsum for both products, torch.where for the mask.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        banded_loop_over_frames,
        "correct",
        "A Python loop over the frames, each against its slice of keys.",
    ),
    BlindCase(
        CHECK,
        "sliding_windows_unfold",
        banded_sliding_windows,
        "correct",
        "2w + 1 key windows by F.pad and unfold, out-of-range slots masked as padding.",
    ),
    BlindCase(
        CHECK,
        "sdpa_guarded",
        banded_sdpa_guarded,
        "correct",
        "F.scaled_dot_product_attention with the band mask; rows with no key see all, then 0.",
    ),
]
