"""Blind set B7, check_banded_attention (chapter 20): local attention in a band |t - s| <= w."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_banded_attention"


def _softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """Softmax over the visible keys; a row with no visible key gets zeros (no NaN)."""
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1) * has_key


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: bool = True) -> Tensor:
    """Full attention under a boolean mask, zero output for a query with no key."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    return _softmax(scores, mask.expand_as(scores)) @ v


def _offsets(T: int) -> Tensor:
    idx = torch.arange(T)
    return idx[:, None] - idx[None, :]  # (T, T): t - s


def _band(T: int, window: int, causal: bool) -> Tensor:
    d = _offsets(T)
    return (d.abs() <= window) & (d >= 0) if causal else d.abs() <= window


def _with_padding(mask: Tensor, key_padding: Tensor | None) -> Tensor:
    return mask if key_padding is None else mask & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)  # window frames each side
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_range_end_excluded(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        lo = max(0, t - window)
        hi = t + 1 if causal else min(T, t + window)  # as range(t - w, t + w): t + w left out
        band[t, lo:hi] = True
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    band = (d >= 0) & (d <= window)  # the past window frames only
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[-2]).abs() <= window
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    band = d.abs() <= window
    if causal:
        band = band & torch.ones_like(band).triu()  # s >= t: the upper triangle
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, _band(q.shape[-2], window, causal))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[-2], window, causal)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding, as in PyTorch
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[-2], window, causal)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def band_nan_for_empty(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[-2], window, causal), key_padding)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[-2], window, causal), key_padding)
    return _attend(q, k, v, mask, scale=False)


def band_indices_clamped(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    right = 0 if causal else window
    rel = torch.arange(-window, right + 1)  # (W,)
    idx = (torch.arange(T)[:, None] + rel[None, :]).clamp(0, T - 1)  # (T, W): the ends repeat
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])  # (B, H, T, W)
    real = torch.ones(q.shape[0], T, dtype=torch.bool) if key_padding is None else key_padding
    weights = _softmax(scores, real[:, idx][:, None].expand_as(scores))  # (B, T, W) -> scores
    return (weights[..., None] * vw).sum(-2)


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    right = 0 if causal else window
    kp = F.pad(k, (0, 0, window, right))  # zero frames beyond both ends
    vp = F.pad(v, (0, 0, window, right))
    W = window + right + 1
    kw = kp.unfold(2, W, 1).transpose(-1, -2)  # (B, H, T, W, D)
    vw = vp.unfold(2, W, 1).transpose(-1, -2)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])
    real = torch.ones(q.shape[0], T, dtype=torch.bool) if key_padding is None else key_padding
    real = F.pad(real, (window, right), value=True).unfold(1, W, 1)  # (B, T, W)
    weights = _softmax(scores, real[:, None].expand_as(scores))
    return (weights[..., None] * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T) % T  # t - s modulo T, as if the frames were on a ring (torch.roll)
    band = d <= window
    if not causal:
        band |= d >= T - window
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    mask = _with_padding(_band(q.shape[-2], window, causal), key_padding)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, -1e9).softmax(-1)
    return weights @ v


def band_window_zero_shortcut(q, k, v, window, causal=False, key_padding=None):
    if window == 0:
        return v.clone()  # each frame sees only itself: its weight is 1
    mask = _with_padding(_band(q.shape[-2], window, causal), key_padding)
    return _attend(q, k, v, mask)


# ---------------------------------------------------------------- correct variants


def band_tril_triu_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """The band from tril/triu of a ones matrix and the package's attention() (chapter 12)."""
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.triu(-window).tril(0 if causal else window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask)
    return out


def band_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """A loop over query frames, each attending to its slice of keys; zeros if none is real."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = torch.einsum("bhd,bhsd->bhs", q[:, :, t], k[:, :, lo:hi]) / Dh**0.5
        if key_padding is not None:
            scores = scores.masked_fill(~key_padding[:, None, lo:hi], float("-inf"))
        seen = torch.isfinite(scores).any(-1, keepdim=True)
        weights = torch.where(seen, scores, torch.zeros_like(scores)).softmax(-1)
        weights = torch.where(torch.isfinite(scores), weights, torch.zeros_like(weights))
        outs.append(torch.einsum("bhs,bhsd->bhd", weights, v[:, :, lo:hi]))
    return torch.stack(outs, dim=2)


def band_float64_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention in float64 with a band mask; rows with no key zeroed
    afterwards; optional scale with the usual default."""
    dtype, T = q.dtype, q.shape[-2]
    idx = torch.arange(T, device=q.device)
    diff = idx[:, None] - idx[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    mask = band.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    has_key = mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    safe = mask | ~has_key  # give an empty row something to attend to, then zero it
    out = F.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), attn_mask=safe, scale=scale
    )
    return (out * has_key).to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I used |t - s| < window instead of <=, so the band is one frame too narrow on each "
        "side (and window=0 sees nothing).",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I read 'window' as the frames on each side besides the neighbour and used "
        "|t - s| <= window + 1.",
    ),
    BlindCase(
        CHECK,
        "range_end_excluded_right",
        band_range_end_excluded,
        "mistake",
        "My loop builds the band with range(t - window, t + window), which leaves out the "
        "frame t + window on the right (the causal band is right).",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I always build the past-only band 0 <= t - s <= window, also when causal=False.",
    ),
    BlindCase(
        CHECK,
        "causal_flag_ignored",
        band_causal_ignored,
        "mistake",
        "I always use the two-sided band and never look at causal.",
    ),
    BlindCase(
        CHECK,
        "causal_band_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I ANDed the band with triu() instead of tril(), so each frame sees the "
        "next window frames instead of the previous ones.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I never use key_padding, so padding frames are attended to.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I ANDed the band with ~key_padding, as if True meant padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), so it masks the padded queries' rows "
        "instead of the padded keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        band_nan_for_empty,
        "mistake",
        "A frame whose band holds only padding gets a softmax over all -inf: NaN, not zeros.",
    ),
    BlindCase(
        CHECK,
        "scale_missing",
        band_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "indices_clamped_at_ends",
        band_indices_clamped,
        "mistake",
        "I gather the 2w + 1 neighbours with indices clamped to [0, T - 1], so near the ends "
        "the first or last frame is counted several times.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted_as_keys",
        band_zero_padded_keys,
        "mistake",
        "I padded k and v with zero frames beyond the ends and unfolded windows, but marked "
        "those frames as real, so the ends attend to zero keys.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance (t - s) % T, as with torch.roll, so the first and last frames "
        "see each other.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a frame that sees no key averages all the "
        "values instead of giving zeros.",
    ),
    BlindCase(
        CHECK,
        "window_zero_returns_v",
        band_window_zero_shortcut,
        "mistake",
        "For window=0 I return v directly (each frame sees only itself), forgetting that a "
        "padding frame then sees no key and must give zeros.",
    ),
    BlindCase(
        CHECK,
        "tril_triu_with_attention",
        band_tril_triu_attention,
        "correct",
        "The band as ones.triu(-w).tril(0 or w), combined with key_padding, through the "
        "package's attention().",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A loop over query frames, each scored against its slice of keys with einsum, "
        "padding masked, zeros for a frame with no real key.",
    ),
    BlindCase(
        CHECK,
        "sdpa_float64",
        band_float64_sdpa,
        "correct",
        "F.scaled_dot_product_attention in float64 with the band mask, empty rows given a dummy "
        "key and zeroed afterwards; an optional scale argument.",
    ),
]
