"""Blind set B19, check_banded_attention (chapter 20): banded local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _masked_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: bool = True) -> Tensor:
    """Right masked attention (zero output where a query sees no key)."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _with_padding(band: Tensor, key_padding: Tensor | None) -> Tensor:
    return band if key_padding is None else band & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window + 1  # window frames on each side, plus the frame itself
    if causal:
        band = band & (d >= 0)
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t if causal else t + window  # range's end is excluded: t + window is missed
        for s in range(max(0, t - window), min(T, hi)):
            band[t, s] = True
    band |= torch.eye(T, dtype=torch.bool, device=q.device)  # a frame always sees itself
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def band_always_one_sided(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril().triu(-window)
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d <= 0)  # s >= t
    return _masked_attention(q, k, v, _with_padding(band, key_padding))


def _windows(x: Tensor, window: int, mode: str) -> Tensor:
    """(B, H, T, D) -> (B, H, T, 2w+1, D): frames t-w .. t+w, the ends handled by ``mode``."""
    T = x.shape[-2]
    idx = torch.arange(T, device=x.device)[:, None] + torch.arange(-window, window + 1)
    if mode == "clamp":
        idx = idx.clamp(0, T - 1)
    elif mode == "wrap":
        idx = idx % T
    return x[:, :, idx]


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    w = window
    kz = F.pad(k, (0, 0, w, w))  # zero frames before and after the sequence
    vz = F.pad(v, (0, 0, w, w))
    kw = kz.unfold(2, 2 * w + 1, 1).transpose(-1, -2)  # (B, H, T, 2w+1, Dh)
    vw = vz.unfold(2, 2 * w + 1, 1).transpose(-1, -2)
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])  # (B, H, T, 2w+1)
    mask = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        mask[..., w + 1 :] = False
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        mask = mask & real[:, None]
    has_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0).softmax(-1)
    return (weights.masked_fill(~has_key, 0)[..., None] * vw).sum(-2)


def _gathered(q, k, v, window, causal, key_padding, mode):
    w = window
    kw, vw = _windows(k, w, mode), _windows(v, w, mode)  # (B, H, T, 2w+1, D)
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])
    mask = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        mask[..., w + 1 :] = False
    if key_padding is not None:
        real = _windows(key_padding[:, None, :, None], w, mode)[:, 0, :, :, 0]  # (B, T, 2w+1)
        mask = mask & real[:, None]
    has_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0).softmax(-1)
    return (weights.masked_fill(~has_key, 0)[..., None] * vw).sum(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    return _gathered(q, k, v, window, causal, key_padding, "clamp")


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    return _gathered(q, k, v, window, causal, key_padding, "wrap")


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _masked_attention(q, k, v, band.expand(q.shape[0], 1, -1, -1))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    pad = None if key_padding is None else ~key_padding  # True = padding
    return _masked_attention(q, k, v, _with_padding(band, pad))


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # (B, 1, T, 1)
    return _masked_attention(q, k, v, band)


def band_nan_when_empty(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = _with_padding(band, key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _masked_attention(q, k, v, _with_padding(band, key_padding), scale=False)


def band_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = _with_padding(band, key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v  # no NaN, I thought


# ---------------------------------------------------------------- correct variants


def band_full_mask(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    t = torch.arange(T, device=q.device)
    band = (t[None, :] >= t[:, None] - window) & (t[None, :] <= t[:, None] + window)
    if causal:
        band &= t[None, :] <= t[:, None]
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    empty = torch.isinf(scores).all(-1, keepdim=True)
    weights = torch.softmax(torch.where(empty, torch.zeros_like(scores), scores), -1)
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_valid_windows(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    """O(T * w): each frame's 2w+1 neighbours gathered, the ones outside the sequence masked."""
    B, H, T, Dh = q.shape
    w = min(window, T)  # a window past the ends adds nothing
    idx = torch.arange(T, device=q.device)[:, None] + torch.arange(-w, w + 1, device=q.device)
    inside = (idx >= 0) & (idx < T)  # (T, 2w+1)
    if causal:
        inside &= idx <= torch.arange(T, device=q.device)[:, None]
    idx = idx.clamp(0, T - 1)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, 2w+1, D)
    mask = inside.expand(B, 1, T, 2 * w + 1)
    if key_padding is not None:
        mask = mask & key_padding[:, idx][:, None]
    scale = Dh**-0.5 if scale is None else scale
    scores = torch.einsum("bhtd,bhtjd->bhtj", q, kw) * scale
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1) * has_key
    return torch.einsum("bhtj,bhtjd->bhtd", weights, vw)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        scores = q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1) / math.sqrt(q.shape[-1])
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi]  # (B, 1, 1, n)
            scores = scores.masked_fill(~real, float("-inf"))
            seen = real.any(-1, keepdim=True)
            weights = scores.masked_fill(~seen, 0.0).softmax(-1) * seen
        else:
            weights = scores.softmax(-1)
        outs.append(weights @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I kept |t - s| < window instead of <= window.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I counted the frame itself apart and allowed |t - s| <= window + 1.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I filled the band with range(t - window, t + window), which leaves out t + window.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_one_sided,
        "mistake",
        "I built the causal band (tril) even when causal=False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I built the two-sided band and never used causal.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept s >= t instead of s <= t: the band looks ahead.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_keys",
        band_zero_padded_keys,
        "mistake",
        "I zero-padded k and v by window frames on each side and unfolded 2w+1 keys per "
        "frame, so the zero frames at the ends count as keys.",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I gathered frames t-w .. t+w with indices clamped to 0 .. T-1, so the ends see "
        "their first/last frame several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I gathered frames t-w .. t+w with indices modulo T, so the band wraps around.",
    ),
    BlindCase(CHECK, "padding_ignored", band_padding_ignored, "mistake", "I forgot key_padding."),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I took key_padding as True = padding and inverted it.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I laid key_padding along the query axis, (B, 1, T, 1), instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "nan_when_no_key",
        band_nan_when_empty,
        "mistake",
        "I filled with -inf and took a plain softmax, so a frame with no key gives NaN.",
    ),
    BlindCase(
        CHECK, "no_scale", band_no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)."
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_minus_1e9,
        "mistake",
        "I filled with -1e9, so a frame with no visible key averages every frame instead of "
        "giving zero.",
    ),
    BlindCase(
        CHECK,
        "full_mask_einsum",
        band_full_mask,
        "correct",
        "Full attention under a band mask built from index comparisons, with einsum, "
        "empty rows zeroed by torch.where.",
    ),
    BlindCase(
        CHECK,
        "gathered_valid_windows",
        band_valid_windows,
        "correct",
        "Each frame's 2w+1 neighbours gathered by index, the ones outside the sequence "
        "masked out; an extra scale argument with a default.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A Python loop over frames slicing each frame's keys.",
    ),
]
