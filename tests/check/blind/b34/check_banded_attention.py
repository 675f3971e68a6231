"""Blind set B34, check_banded_attention (chapter 20): local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None) -> Tensor:
    """Masked attention with the NaN guard of chapter 6 (allowed: True = may attend)."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _pad(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) if window > 0 else (d == 0)
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _pad(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # w neighbours on each side plus the frame itself
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _pad(key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t + 1 if causal else t + window  # range(t - w, t + w)
        band[t, max(t - window, 0) : max(hi, t + 1)] = True
    return _attend(q, k, v, band & _pad(key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the window is the past frames
    return _attend(q, k, v, band & _pad(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _attend(q, k, v, (d.abs() <= window) & _pad(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.triu(0).tril(window) if causal else ones.tril(window).triu(-window)
    return _attend(q, k, v, band & _pad(key_padding))


def band_zero_keys_counted(q, k, v, window, causal=False, key_padding=None):
    """Sliding window on zero-padded keys; the zeros at the ends take part in the softmax."""
    T = q.shape[2]
    right = 0 if causal else window
    kp = F.pad(k, (0, 0, window, right))
    vp = F.pad(v, (0, 0, window, right))
    real = torch.ones(q.shape[0], T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    realp = F.pad(real, (window, right), value=True)  # the added frames are not padding
    width = window + right + 1
    kw = kp.unfold(2, width, 1)  # (B, H, T, Dh, width)
    vw = vp.unfold(2, width, 1)
    rw = realp.unfold(1, width, 1)[:, None]  # (B, 1, T, width)
    scores = (q.unsqueeze(-2) @ kw).squeeze(-2) / math.sqrt(q.shape[-1])
    has = rw.any(-1, keepdim=True)
    scores = scores.masked_fill(~rw, float("-inf")).masked_fill(~has, 0.0)
    w = scores.softmax(-1).masked_fill(~has, 0.0)
    return (vw @ w.unsqueeze(-1)).squeeze(-1)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T, device=q.device)
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    idx = (t[:, None] + offs[None, :]).clamp(0, T - 1)  # (T, W): stay inside the sequence
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q.unsqueeze(-2) * kw).sum(-1) / math.sqrt(q.shape[-1])
    real = torch.ones(q.shape[0], T, dtype=torch.bool) if key_padding is None else key_padding
    allowed = real[:, idx][:, None]  # (B, 1, T, W)
    has = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has, 0.0)
    w = scores.softmax(-1).masked_fill(~has, 0.0)
    return (w.unsqueeze(-1) * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # distance on a circle
    ahead = d == 0 if causal else (T - d) <= window
    band = (d <= window) | ahead
    return _attend(q, k, v, band & _pad(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True marks the padding
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True) & _pad(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~band, float("-inf")).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding), scale=1.0)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding), scale=1 / math.sqrt(v.shape[-1]))


# ---------------------------------------------------------------- correct variants


def band_full_masked(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T, device=q.device)
    diff = t[:, None] - t[None, :]
    allowed = diff.abs() <= window
    if causal:
        allowed = allowed & (diff >= 0)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    else:
        allowed = allowed.expand(q.shape[0], 1, T, T)
    return _attend(q, k, v, allowed)


def band_sliding_gather(q, k, v, window, causal=False, key_padding=None):
    """O(T * w): the keys of each frame gathered from its window, out-of-range ones masked."""
    B, H, T, Dh = q.shape
    t = torch.arange(T, device=q.device)
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    pos = t[:, None] + offs[None, :]  # (T, W)
    inside = (pos >= 0) & (pos < T)
    idx = pos.clamp(0, T - 1)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kw) / math.sqrt(Dh)
    allowed = inside.expand(B, 1, T, offs.numel())
    if key_padding is not None:
        allowed = allowed & key_padding[:, idx][:, None]
    has = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has, 0.0)
    w = scores.softmax(-1).masked_fill(~has, 0.0)
    return torch.einsum("bhtw,bhtwd->bhtd", w, vw)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        if key_padding is None:
            real = torch.ones(B, 1, 1, hi - lo, dtype=torch.bool, device=q.device)
        else:
            real = key_padding[:, None, None, lo:hi]
        outs.append(_attend(q[:, :, t : t + 1], k[:, :, lo:hi], v[:, :, lo:hi], real))
    return torch.cat(outs, dim=2)


CASES = [
    BlindCase(CHECK, "too_narrow", band_too_narrow, "mistake", "I used |t - s| < window"),
    BlindCase(
        CHECK,
        "too_wide",
        band_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, counting the frame itself apart",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "my slice was t - w : t + w, so the last frame on the right is missing",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        band_always_causal,
        "mistake",
        "I only looked at the past w frames, whatever causal says",
    ),
    BlindCase(
        CHECK, "causal_ignored", band_causal_ignored, "mistake", "I forgot to use the causal flag"
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "for causal I used triu(0).tril(window), keeping the future frames",
    ),
    BlindCase(
        CHECK,
        "zero_keys_counted",
        band_zero_keys_counted,
        "mistake",
        "I padded k and v with zeros at both ends and did not mask those frames",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I clamped the window's indices into 0..T-1",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I measured t - s modulo T, like torch.roll",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I forgot the key_padding argument",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I treated key_padding True as padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I put key_padding on the query axis, [:, None, :, None]",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        band_nan_rows,
        "mistake",
        "plain softmax after filling with -inf, no guard for empty rows",
    ),
    BlindCase(CHECK, "no_scale", band_no_scale, "mistake", "I forgot to divide by sqrt(Dh)"),
    BlindCase(
        CHECK, "scale_by_dv", band_scale_by_dv, "mistake", "I divided by sqrt of v's last dimension"
    ),
    BlindCase(
        CHECK,
        "full_masked",
        band_full_masked,
        "correct",
        "full attention under a band mask built from t - s",
    ),
    BlindCase(
        CHECK,
        "sliding_gather",
        band_sliding_gather,
        "correct",
        "each frame's window gathered with indices, out-of-range keys masked, einsum",
    ),
    BlindCase(
        CHECK,
        "frame_loop",
        band_frame_loop,
        "correct",
        "a loop over frames, slicing each window's keys",
    ),
]
