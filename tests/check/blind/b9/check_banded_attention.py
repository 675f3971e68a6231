"""Blind set B9, check_banded_attention (chapter 20): banded local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Right masked attention: a query without a visible key gets zeros."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device=None) -> Tensor:
    idx = torch.arange(T, device=device)
    return idx[:, None] - idx[None, :]  # (T, T): t - s


def _pad(key_padding: Tensor | None, B: int, T: int) -> Tensor:
    if key_padding is None:
        return torch.ones(B, 1, 1, T, dtype=torch.bool)
    return key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], q.shape[2]))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], q.shape[2]))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    band = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        hi = t if causal else t + window  # range end is exclusive
        for s in range(max(0, t - window), min(T, hi)):
            band[t, s] = True
        band[t, t] = True
    return _attend(q, k, v, band & _pad(key_padding, B, T))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    band = torch.ones(q.shape[2], q.shape[2], dtype=torch.bool).tril().triu(-window)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], q.shape[2]))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[2]).abs() <= window
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], q.shape[2]))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool)
    band = ones.triu().tril(window) if causal else ones.tril(window).triu(-window)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], T))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band.expand(q.shape[0], 1, T, T))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding, I thought
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # (B, 1, T, 1): masks rows
    return _attend(q, k, v, band)


def band_nan_for_empty(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    mask = band & _pad(key_padding, q.shape[0], T)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], T), scale=1.0)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    lo = -window
    hi = 0 if causal else window
    offsets = torch.arange(lo, hi + 1)
    idx = (torch.arange(T)[:, None] + offsets[None, :]).clamp(0, T - 1)  # (T, W)
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, k_win) / math.sqrt(Dh)
    real = _pad(key_padding, B, T).reshape(B, T)[:, idx][:, None]  # (B, 1, T, W)
    has = real.any(-1, keepdim=True)
    w = scores.masked_fill(~real, float("-inf")).masked_fill(~has, 0).softmax(-1)
    return torch.einsum("bhtw,bhtwd->bhtd", w.masked_fill(~has, 0), v_win)


def band_zero_pad_keys(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    k_p = F.pad(k, (0, 0, window, right))  # zero keys beyond the ends
    v_p = F.pad(v, (0, 0, window, right))
    W = window + right + 1
    k_win = k_p.unfold(2, W, 1).transpose(-2, -1)  # (B, H, T, W, Dh)
    v_win = v_p.unfold(2, W, 1).transpose(-2, -1)
    real = _pad(key_padding, B, T).reshape(B, T)
    real = F.pad(real, (window, right), value=True).unfold(1, W, 1)[:, None]  # (B, 1, T, W)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, k_win) / math.sqrt(Dh)
    has = real.any(-1, keepdim=True)
    w = scores.masked_fill(~real, float("-inf")).masked_fill(~has, 0).softmax(-1)
    return torch.einsum("bhtw,bhtwd->bhtd", w.masked_fill(~has, 0), v_win)


def band_large_negative(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    mask = band & _pad(key_padding, q.shape[0], T)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v  # no NaN, I thought


# ---------------------------------------------------------------- correct variants


def band_abs_offsets(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    return _attend(q, k, v, band & _pad(key_padding, q.shape[0], q.shape[2]))


def band_per_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window))
        ks, vs = k[:, :, lo : hi + 1], v[:, :, lo : hi + 1]
        s = torch.einsum("bhd,bhsd->bhs", q[:, :, t], ks) / math.sqrt(Dh)
        m = real[:, None, lo : hi + 1]  # (B, 1, S)
        has = m.any(-1, keepdim=True)
        w = s.masked_fill(~m, float("-inf")).masked_fill(~has, 0.0).softmax(-1)
        w = w.masked_fill(~has, 0.0)
        outs.append(torch.einsum("bhs,bhsd->bhd", w, vs))
    return torch.stack(outs, dim=2)


def band_sdpa(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    mask = band & _pad(key_padding, q.shape[0], T).to(q.device)  # (B, 1, T, T)
    has = mask.any(-1, keepdim=True)
    safe = mask | ~has  # let an empty row see everything, then zero it
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out.masked_fill(~has, 0.0)


def band_float32_inside(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band & _pad(key_padding, q.shape[0], T)
    return _attend(q.double(), k.double(), v.double(), mask).to(v.dtype)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "|t - s| < window instead of <=: one frame too few on each side (window 0 sees nothing)",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "|t - s| <= window + 1: one frame too many on each side",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I loop s in range(t - window, t + window) with an exclusive end, so the frame at "
        "t + window is missing (the diagonal added by hand)",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        band_always_causal,
        "mistake",
        "tril().triu(-window) regardless of causal: a one-sided band when two-sided is asked",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never use the causal flag: always a two-sided band",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "for causal I wrote triu().tril(window): the band lies on the wrong side, each frame "
        "sees the next window frames instead of the previous ones",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I never use key_padding: padding frames are attended to",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I AND the band with ~key_padding, as if True meant padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: the padding masks the query rows, not the keys",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        band_nan_for_empty,
        "mistake",
        "a plain softmax after masked_fill(-inf): a frame that sees no key gets NaN",
    ),
    BlindCase(
        CHECK, "no_scale", band_no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)"
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I gather a fixed window of keys per frame with indices clamped to [0, T - 1], so the "
        "first and last frames count the edge frame several times",
    ),
    BlindCase(
        CHECK,
        "zero_padded_keys",
        band_zero_pad_keys,
        "mistake",
        "I zero-pad k and v at both ends and unfold a window per frame; the zero keys beyond "
        "the sequence are counted as real keys (score 0)",
    ),
    BlindCase(
        CHECK,
        "large_negative_fill",
        band_large_negative,
        "mistake",
        "masked_fill with -1e9 instead of -inf: a frame with no visible key gets the uniform "
        "average of all values instead of zeros (right when every frame has a key)",
    ),
    BlindCase(
        CHECK,
        "abs_offsets",
        band_abs_offsets,
        "correct",
        "a (T, T) matrix of t - s; band = |t - s| <= window, and t - s >= 0 when causal",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        band_per_frame_loop,
        "correct",
        "a loop over frames, each attending to its slice of keys with einsum",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_empty_rows_fixed",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the boolean band mask; empty rows are given every "
        "key and zeroed afterwards",
    ),
    BlindCase(
        CHECK,
        "float64_inside",
        band_float32_inside,
        "correct",
        "the mask from two comparisons on t - s, attention computed in float64 and cast back",
    ),
]
