"""Blind set B14, check_banded_attention (chapter 20): local (banded) attention as readers
write it, mostly as full attention under a hand-made band mask."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: bool = True) -> Tensor:
    """A right masked attention (zeros for a query with no key), shared by the mistakes."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    allowed = allowed.expand(scores.shape)
    has = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has, 0.0)
    return scores.softmax(-1).masked_fill(~has, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # t - s


def _pad(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding))


def band_short_right(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        hi = t + 1 if causal else t + window  # range end left out
        for s in range(max(0, t - window), min(T, hi)):
            band[t, s] = True
    return _attend(q, k, v, band & _pad(key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the past window only
    return _attend(q, k, v, band & _pad(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _attend(q, k, v, (d.abs() <= window) & _pad(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(window).triu(-window)
    if causal:
        band = band.triu()  # s >= t: the wrong triangle
    return _attend(q, k, v, band & _pad(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding, I assumed
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    mask = band & _pad(key_padding)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool).tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band & _pad(key_padding), scale=False)


def band_clamped_gather(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    offs = torch.arange(-window, 1 if causal else window + 1)
    idx = (torch.arange(T)[:, None] + offs).clamp(0, T - 1)  # (T, W): neighbours, clamped
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    ok = real[:, idx][:, None]  # (B, 1, T, W)
    has = ok.any(-1, keepdim=True)
    w = scores.masked_fill(~ok, float("-inf")).masked_fill(~has, 0.0).softmax(-1)
    w = w.masked_fill(~has, 0.0)
    return (w[..., None] * vw).sum(-2)


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    B, H, T, D = q.shape
    right = 0 if causal else window
    kp = F.pad(k, (0, 0, window, right)).unfold(2, window + right + 1, 1)  # zeros as keys
    vp = F.pad(v, (0, 0, window, right)).unfold(2, window + right + 1, 1)
    scores = (q[..., None, :] @ kp).squeeze(-2) / math.sqrt(D)  # (B, H, T, W)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    ok = F.pad(real, (window, right), value=True).unfold(1, window + right + 1, 1)[:, None]
    has = ok.any(-1, keepdim=True)
    w = scores.masked_fill(~ok, float("-inf")).masked_fill(~has, 0.0).softmax(-1)
    w = w.masked_fill(~has, 0.0)
    return (w[..., None, :] @ vp.transpose(-2, -1)).squeeze(-2)


def band_wraps(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # circular distance
    dist = torch.minimum(d, (T - d) % T)
    band = dist <= window
    if causal:
        band = band & ((d <= window) & (d >= 0))
    return _attend(q, k, v, band & _pad(key_padding))


# ---------------------------------------------------------------- correct variants


def band_abs_mask(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full attention under |t - s| <= w from an arange difference; zeros via nan_to_num-free
    guard; extra dropout argument would be off anyway."""
    T = q.shape[2]
    pos = torch.arange(T, device=q.device)
    diff = pos[:, None] - pos[None, :]
    allowed = diff.abs() <= window
    if causal:
        allowed &= diff >= 0
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    return _attend(q, k, v, allowed)


def band_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention; rows with no key opened up, then zeroed."""
    T = q.shape[2]
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = allowed.tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    allowed = allowed.expand(q.shape[0], q.shape[1], T, T)
    has = allowed.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~has)
    return out * has


def band_per_frame(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """A loop over frames, each attending to its slice of keys."""
    B, H, T, D = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        s = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) * D**-0.5  # (B, H, 1, n)
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi]
            has = real.any(-1, keepdim=True)
            w = s.masked_fill(~real, float("-inf")).masked_fill(~has, 0.0).softmax(-1)
            w = w * has
        else:
            w = s.softmax(-1)
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I used |t - s| < window, one frame too narrow.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I used |t - s| <= window + 1, one frame too wide.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_short_right,
        "mistake",
        "My loop's range(t - w, t + w) leaves out the last key on the right.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I always looked back only (0 <= t - s <= w), even when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used causal: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_wrong_triangle",
        band_causal_looks_ahead,
        "mistake",
        "For causal I took triu instead of tril, so frames look ahead.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band and forgot key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I treated key_padding True as padding and blocked the real frames.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding along the queries axis instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_no_key",
        band_nan_rows,
        "mistake",
        "masked_fill -inf then softmax: a frame with no key gets NaN.",
    ),
    BlindCase(
        CHECK, "no_scale", band_no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)."
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_gather,
        "mistake",
        "I gathered neighbours t-w..t+w with indices clamped at the ends.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_padded_keys,
        "mistake",
        "I zero-padded k and v and unfolded windows; the zeros count as keys at the ends.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps,
        "mistake",
        "My distance is circular (mod T), so the band wraps around the ends.",
    ),
    BlindCase(
        CHECK,
        "abs_difference_mask",
        band_abs_mask,
        "correct",
        "Full attention under a mask from an arange difference, abs() <= window.",
    ),
    BlindCase(
        CHECK,
        "sdpa_guarded",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention, rows with no key opened then zeroed.",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        band_per_frame,
        "correct",
        "A loop over frames, each attending to its own slice of keys.",
    ),
]
