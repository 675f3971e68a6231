"""Blind set B12, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Right masked attention: -inf fill, rows without a key give zeros."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    return scores.softmax(-1).masked_fill(~has, 0.0) @ v


def _offsets(T: int, device=None) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # t - s


def _pad(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def ba_band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window  # strict: |t - s| < w
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _pad(key_padding))


def ba_band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # the window plus the frame itself
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _pad(key_padding))


def ba_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t + 1 if causal else t + window  # range(t - w, t + w) leaves out t + w
        for s in range(max(t - window, 0), min(hi, T)):
            band[t, s] = True
    return _attend(q, k, v, band & _pad(key_padding))


def ba_one_sided_always(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the past only, causal or not
    return _attend(q, k, v, band & _pad(key_padding))


def ba_causal_wrong_axis(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d <= 0  # s >= t: looks ahead
    return _attend(q, k, v, band & _pad(key_padding))


def ba_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = torch.ones(q.shape[2], q.shape[2], dtype=torch.bool, device=q.device)
    band = band.triu(-window).tril(window)  # causal forgotten
    return _attend(q, k, v, band & _pad(key_padding))


def ba_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = band if key_padding is None else band & key_padding[:, None, :, None]
    return _attend(q, k, v, mask)


def ba_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band)


def ba_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = band & _pad(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v  # NaN for a row with no key


def ba_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding), scale=1.0)


def ba_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))  # zero keys around the ends, counted as keys
    vp = F.pad(v, (0, 0, w, w))
    idx = torch.arange(T, device=q.device)[:, None] + torch.arange(2 * w + 1, device=q.device)
    kw, vw = kp[:, :, idx], vp[:, :, idx]  # (B, H, T, 2w+1, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, 2w+1)
    offs = torch.arange(2 * w + 1, device=q.device) - w  # s - t
    ok = torch.ones(B, 1, T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        ok = ok & (offs <= 0)
    if key_padding is not None:
        kpp = F.pad(key_padding, (w, w), value=True)[:, idx]  # (B, T, 2w+1)
        ok = ok & kpp[:, None]
    has = ok.any(-1, keepdim=True)
    weights = scores.masked_fill(~ok, float("-inf")).masked_fill(~has, 0).softmax(-1)
    weights = weights.masked_fill(~has, 0)
    return (weights[..., None] * vw).sum(-2)


def ba_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    offs = torch.arange(-w, (0 if causal else w) + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs).clamp(0, T - 1)  # stay in range
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    ok = torch.ones(B, 1, T, len(offs), dtype=torch.bool, device=q.device)
    if key_padding is not None:
        ok = ok & key_padding[:, idx][:, None]
    has = ok.any(-1, keepdim=True)
    weights = scores.masked_fill(~ok, float("-inf")).masked_fill(~has, 0).softmax(-1)
    return (weights.masked_fill(~has, 0)[..., None] * vw).sum(-2)


def ba_wraparound(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    i = torch.arange(T, device=q.device)
    d = (i[:, None] - i[None, :]) % T  # circular distance, like torch.roll
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band = d <= window
    return _attend(q, k, v, band & _pad(key_padding))


# ---------------------------------------------------------------- correct variants


def ba_band_from_tril(q, k, v, window, causal=False, key_padding=None):
    """The band from tril/triu of a ones matrix, attention by hand."""
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(-window)
    return _attend(q, k, v, band & _pad(key_padding))


def ba_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention under the band mask, NaN rows of a keyless frame zeroed."""
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band.expand(q.shape[0], 1, -1, -1)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    has = mask.any(-1, keepdim=True)
    safe = mask | ~has  # a frame with no key attends to everything, then is zeroed
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out * has


def ba_per_frame_loop(q, k, v, window, causal=False, key_padding=None, block_size=None):
    """A loop over frames, each attending to its slice of keys; an extra unused argument."""
    B, H, T, _ = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype, device=v.device)
    rows = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        ks, vs = k[:, :, lo:hi], v[:, :, lo:hi]
        s = torch.einsum("bhd,bhsd->bhs", q[:, :, t], ks) / math.sqrt(q.shape[-1])
        if key_padding is not None:
            real = key_padding[:, None, lo:hi]
            any_real = real.any(-1, keepdim=True)
            s = s.masked_fill(~real, float("-inf")).masked_fill(~any_real, 0.0)
            w = s.softmax(-1) * any_real
        else:
            w = s.softmax(-1)
        rows.append(torch.einsum("bhs,bhsd->bhd", w, vs))
    out = out + torch.stack(rows, dim=2)
    return out


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        ba_band_too_narrow,
        "mistake",
        "I used |t - s| < window, one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        ba_band_too_wide,
        "mistake",
        "I used |t - s| <= window + 1, counting the frame itself on top of the window.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        ba_range_end_left_out,
        "mistake",
        "A loop with range(t - w, t + w): the frame t + w is left out.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        ba_one_sided_always,
        "mistake",
        "My band looks only at the past, also when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        ba_causal_wrong_axis,
        "mistake",
        "For causal I kept s >= t instead of s <= t.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        ba_causal_ignored,
        "mistake",
        "I built the two-sided band and forgot the causal argument.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        ba_padding_on_queries,
        "mistake",
        "I put key_padding on the query axis, [:, None, :, None].",
    ),
    BlindCase(CHECK, "padding_ignored", ba_padding_ignored, "mistake", "I never used key_padding."),
    BlindCase(
        CHECK,
        "nan_for_keyless_frame",
        ba_nan_rows,
        "mistake",
        "Plain -inf fill and softmax: a frame with no key gets NaN, not zeros.",
    ),
    BlindCase(
        CHECK, "no_scale", ba_no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)."
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        ba_zero_padded_keys,
        "mistake",
        "I padded k and v with w zero frames at each end and let them count as keys.",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        ba_clamped_indices,
        "mistake",
        "I gathered the 2w + 1 neighbours with indices clamped to [0, T - 1], so the end "
        "frames are counted several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        ba_wraparound,
        "mistake",
        "I measured the distance modulo T, so the band wraps around the ends.",
    ),
    BlindCase(
        CHECK,
        "tril_triu_band",
        ba_band_from_tril,
        "correct",
        "The band from tril/triu of a ones matrix; attention written out.",
    ),
    BlindCase(
        CHECK,
        "sdpa_masked",
        ba_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band mask; keyless frames zeroed after.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        ba_per_frame_loop,
        "correct",
        "A loop over frames with key slices and einsum; an extra block_size argument.",
    ),
]
