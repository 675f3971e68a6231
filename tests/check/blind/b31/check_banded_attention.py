"""Blind set B31, check_banded_attention (chapter 20): local (banded) attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None) -> Tensor:
    """A right masked attention: allowed broadcasts to (B, H, T, T); rows with no key give 0."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    scores = scores.masked_fill(~allowed, float("-inf"))
    has_key = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # t - s


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


def _band(T: int, window: int, causal: bool, device) -> Tensor:
    d = _offsets(T, device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    return band


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_range_end_excluded(q, k, v, window, causal=False, key_padding=None):
    """Keys s in range(t - window, t + window): the last one on the right is left out."""
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        end = t + 1 if causal else t + window
        for s in range(max(0, t - window), min(T, end)):
            band[t, s] = True
    return _attend(q, k, v, band & _padding(key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= 0)  # one-sided whatever causal says
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[2], q.device).abs() <= window
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d <= 0  # s >= t
    return _attend(q, k, v, band & _padding(key_padding))


def band_no_abs(q, k, v, window, causal=False, key_padding=None):
    """t - s <= window, without the absolute value: the whole future is visible."""
    d = _offsets(q.shape[2], q.device)
    band = d <= window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, _band(q.shape[2], window, causal, q.device))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[2], window, causal, q.device)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[2], window, causal, q.device)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def band_nan_when_empty(q, k, v, window, causal=False, key_padding=None):
    """masked_fill(-inf) and a plain softmax: a frame with no key gets NaN."""
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    return scores.softmax(-1) @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    """-1e9 instead of -inf: a frame with no key averages every value instead of giving 0."""
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, -1e9)
    return scores.softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    return _attend(q, k, v, allowed, scale=1.0)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    return _attend(q, k, v, allowed, scale=1.0 / math.sqrt(v.shape[-1]))


def band_zero_padded_windows(q, k, v, window, causal=False, key_padding=None):
    """Each frame's 2w + 1 neighbours cut out with F.pad + unfold; the zero padding at the
    ends is scored like a real key."""
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1)
    vp = F.pad(v, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dv, 2w+1)
    scores = torch.einsum("bhtd,bhtdn->bhtn", q, kp) / math.sqrt(Dh)
    offs = torch.arange(-w, w + 1, device=q.device)  # s - t
    ok = torch.ones(T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        ok &= offs[None, :] <= 0
    ok = ok.expand(B, 1, T, 2 * w + 1)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        ok = ok & real[:, None]
    has_key = ok.any(-1, keepdim=True)
    scores = scores.masked_fill(~ok, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return torch.einsum("bhtn,bhtdn->bhtd", weights, vp)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    """Neighbour indices clamped to 0 .. T - 1, so the end frames count twice."""
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs[None, :]).clamp(0, T - 1)  # (T, n)
    kn = k[:, :, idx]  # (B, H, T, n, Dh)
    vn = v[:, :, idx]
    scores = torch.einsum("bhtd,bhtnd->bhtn", q, kn) / math.sqrt(Dh)
    ok = torch.ones_like(scores, dtype=torch.bool)
    if key_padding is not None:
        ok = ok & key_padding[:, idx][:, None]
    has_key = ok.any(-1, keepdim=True)
    scores = scores.masked_fill(~ok, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return torch.einsum("bhtn,bhtnd->bhtd", weights, vn)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    """Neighbours taken modulo T, so the first frames see the last ones."""
    T = q.shape[2]
    d = _offsets(T, q.device)
    circular = torch.minimum(d.abs(), T - d.abs())
    band = circular <= window
    if causal:
        band &= (d % T) <= window
    return _attend(q, k, v, band & _padding(key_padding))


def band_softmax_over_queries(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-2))
    return weights @ v


# ---------------------------------------------------------------- correct variants


def band_tril_triu(q, k, v, window, causal=False, key_padding=None):
    """The band from tril/triu of a ones matrix, then masked attention."""
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band & _padding(key_padding))


def band_per_frame_loop(q, k, v, window, causal=False, key_padding=None):
    """A loop over the frames, each attending to its slice of keys."""
    B, H, T, Dh = q.shape
    out = torch.zeros(*q.shape[:3], v.shape[-1], dtype=v.dtype, device=v.device)
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        ks, vs = k[:, :, lo:hi], v[:, :, lo:hi]
        s = (q[:, :, t : t + 1] @ ks.transpose(-2, -1)) / math.sqrt(Dh)  # (B, H, 1, n)
        if key_padding is not None:
            real = key_padding[:, lo:hi][:, None, None, :]
            s = s.masked_fill(~real, float("-inf"))
            any_real = real.any(-1, keepdim=True)
            w = torch.where(any_real, s, torch.zeros_like(s)).softmax(-1) * any_real
        else:
            w = s.softmax(-1)
        outs.append(w @ vs)
    out = torch.cat(outs, dim=2) if outs else out
    return out


def band_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention with the band as a boolean mask; keyless rows set to 0."""
    allowed = _band(q.shape[2], window, causal, q.device) & _padding(key_padding)
    allowed = allowed.expand(q.shape[0], q.shape[1], -1, -1)
    has_key = allowed.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~has_key)
    return out.masked_fill(~has_key, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I used |t - s| < window, one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I used |t - s| <= window + 1, one frame too wide on each side.",
    ),
    BlindCase(
        CHECK,
        "range_end_excluded",
        band_range_end_excluded,
        "mistake",
        "Keys from range(t - w, t + w): the right end of the window is left out.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "My band is 0 <= t - s <= w always: one-sided even when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used the causal flag: the band is two-sided always.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept s >= t instead of s <= t: each frame sees the future.",
    ),
    BlindCase(
        CHECK,
        "no_absolute_value",
        band_no_abs,
        "mistake",
        "I wrote t - s <= window without abs(), so every later frame is visible.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band and forgot to combine it with key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, thinking True marks the padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: the padding hides queries instead of keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        band_nan_when_empty,
        "mistake",
        "masked_fill(-inf) then a plain softmax: a frame that sees no key becomes NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "-1e9 instead of -inf: a frame with no key averages all values instead of giving 0.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I forgot the 1 / sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_dv",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt(Dv), the values' width, instead of Dh.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted",
        band_zero_padded_windows,
        "mistake",
        "F.pad + unfold windows of 2w + 1 keys: the zeros added at both ends count as keys.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "Neighbour indices clamped to [0, T - 1], so the end frames are counted several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "Distances taken around a circle (mod T): the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        band_softmax_over_queries,
        "mistake",
        "softmax(dim=-2), over the queries, instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "tril_triu_band",
        band_tril_triu,
        "correct",
        "The band built with tril(window or 0).triu(-window), then masked attention.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_per_frame_loop,
        "correct",
        "A loop over the frames, each attending to its slice k[:, :, lo:hi].",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_band_mask",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band mask; rows with no key zeroed afterwards.",
    ),
]
