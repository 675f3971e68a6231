"""Blind set B32, check_banded_attention (chapter 20): local attention in a band |t - s| <= w."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device) -> Tensor:
    """(T, T) matrix of t - s (query t on the rows, key s on the columns)."""
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]


def _full(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    allowed: Tensor,
    key_padding: Tensor | None,
    scale: float | None = None,
) -> Tensor:
    """Attention under a (T, T) band, padding on the keys, zero rows where nothing is seen."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (B, H, T, T)
    mask = allowed[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    mask = mask.expand_as(scores)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _band(T: int, window: int, causal: bool, device) -> Tensor:
    d = _offsets(T, device)
    allowed = d.abs() <= window
    if causal:
        allowed = allowed & (d >= 0)
    return allowed


# ---------------------------------------------------------------- mistakes


def band_strict_less(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() < window  # "within the window"
    if causal:
        allowed = allowed & (d >= 0)
    return _full(q, k, v, allowed, key_padding)


def band_one_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window + 1  # the window counted as "frames on each side plus one"
    if causal:
        allowed = allowed & (d >= 0)
    return _full(q, k, v, allowed, key_padding)


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    allowed = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        last = t if causal else t + window
        for s in range(max(0, t - window), min(T, last)):  # range's end is left out
            allowed[t, s] = True
        if causal:
            allowed[t, t] = True
    return _full(q, k, v, allowed, key_padding)


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = (d >= 0) & (d <= window)  # a local window is the past w frames
    return _full(q, k, v, allowed, key_padding)


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _full(q, k, v, d.abs() <= window, key_padding)


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.triu(0 if causal else -window).tril(window)  # triu for the causal cut
    return _full(q, k, v, allowed, key_padding)


def band_causal_excludes_self(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed = allowed & (d > 0)  # only earlier frames
    return _full(q, k, v, allowed, key_padding)


def band_zero_padded_windows(q, k, v, window, causal=False, key_padding=None):
    """Windows cut with F.pad + unfold; the zero frames at the ends are scored like keys."""
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1)
    vp = F.pad(v, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dv, 2w+1)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, kp) / math.sqrt(Dh)
    offs = torch.arange(2 * w + 1, device=q.device) - w  # s - t
    mask = torch.ones(B, 1, T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        mask = mask & (offs <= 0)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        mask = mask & real[:, None]
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return torch.einsum("bhtw,bhtdw->bhtd", weights, vp)


def band_indices_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs).clamp(0, T - 1)  # (T, W)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, W)
    mask = torch.ones_like(scores, dtype=torch.bool)
    if key_padding is not None:
        mask = mask & key_padding[:, idx][:, None]
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return (weights[..., None] * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # distance on a ring
    dist = torch.minimum(d, T - d)
    allowed = dist <= window
    if causal:
        allowed = allowed & (d <= window)
    return _full(q, k, v, allowed, key_padding)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _full(q, k, v, _band(q.shape[2], window, causal, q.device), None)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    pad = None if key_padding is None else ~key_padding  # True = padding
    return _full(q, k, v, _band(q.shape[2], window, causal, q.device), pad)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    allowed = _band(T, window, causal, q.device)[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, :, None]  # (B, 1, T, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = allowed.expand_as(scores)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def band_nan_for_empty(q, k, v, window, causal=False, key_padding=None):
    mask = _band(q.shape[2], window, causal, q.device)[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    return weights @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    mask = _band(q.shape[2], window, causal, q.device)[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, -1e9).softmax(-1)
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[2], window, causal, q.device)
    return _full(q, k, v, allowed, key_padding, scale=1.0)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    allowed = _band(q.shape[2], window, causal, q.device)
    return _full(q, k, v, allowed, key_padding, scale=1.0 / math.sqrt(v.shape[-1]))


# ---------------------------------------------------------------- correct variants


def band_mask_tril_triu(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    allowed = ones.tril(0 if causal else window).triu(-window)
    return _full(q, k, v, allowed, key_padding)


def band_loop_over_frames(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    out = v.new_zeros(B, H, T, v.shape[-1])
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window))
        ks, vs = k[:, :, lo : hi + 1], v[:, :, lo : hi + 1]  # (B, H, n, D)
        scores = torch.einsum("bhd,bhnd->bhn", q[:, :, t], ks) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, lo : hi + 1][:, None, :]  # (B, 1, n)
            scores = scores.masked_fill(~real, float("-inf"))
            seen = real.any(-1, keepdim=True)  # (B, 1, 1)
            weights = torch.where(seen, scores, torch.zeros_like(scores)).softmax(-1)
            weights = weights * seen
        else:
            weights = scores.softmax(-1)
        out[:, :, t] = torch.einsum("bhn,bhnd->bhd", weights, vs)
    return out


def band_logsumexp_float64(q, k, v, window, causal=False, key_padding=None, scale=None):
    """float64 inside, weights as exp(score - logsumexp); optional scale argument."""
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.matmul(q, k.mT) * scale
    mask = _band(q.shape[2], window, causal, q.device).expand_as(scores)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    visible = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    any_key = mask.any(-1, keepdim=True)
    lse = torch.logsumexp(torch.where(any_key, visible, torch.zeros_like(visible)), -1, True)
    weights = torch.where(mask, torch.exp(visible - lse), torch.zeros_like(scores))
    return (weights @ v).to(dtype)


CASES = [
    BlindCase(
        CHECK,
        "band_strict_less",
        band_strict_less,
        "mistake",
        "I wrote |t - s| < window, so the band is one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_one_too_wide",
        band_one_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, thinking of the window as the frames on each side "
        "plus the frame itself.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I built the mask with a loop over range(t - w, t + w), forgetting that range leaves "
        "out its end, so frame t + w is never seen.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I took the window as the w frames before t (and t itself) even when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I forgot the causal argument: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_triu_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "I cut the causal band with triu(0) instead of tril(0), so each frame sees the next w "
        "frames instead of the previous ones.",
    ),
    BlindCase(
        CHECK,
        "causal_excludes_self",
        band_causal_excludes_self,
        "mistake",
        "In causal mode I kept only s < t, so a frame does not see itself.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_windows",
        band_zero_padded_windows,
        "mistake",
        "I cut windows of 2w + 1 frames with F.pad and unfold; the zero frames added at the "
        "ends are scored as keys (score 0) and take part of the weight.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_indices_clamped,
        "mistake",
        "I gathered the window's keys with indices clamped to 0 .. T - 1, so the frames near "
        "the ends see the first or last frame several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance modulo T, so the band wraps around and the first frames see "
        "the last ones.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band mask and forgot to combine it with key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I treated key_padding as True = padding, so only the padding frames are seen.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), so it masks the padded queries' rows instead "
        "of the padded keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_row",
        band_nan_for_empty,
        "mistake",
        "A plain softmax after filling -inf: a frame that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a frame with no visible key averages all the "
        "values instead of giving zeros.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I forgot the 1 / sqrt(Dh) on the scores.",
    ),
    BlindCase(
        CHECK,
        "scale_by_sqrt_dv",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt of v's last dimension instead of q's.",
    ),
    BlindCase(
        CHECK,
        "mask_tril_triu",
        band_mask_tril_triu,
        "correct",
        "The band built as ones.tril(window or 0).triu(-window), full attention under it.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_loop_over_frames,
        "correct",
        "A loop over the frames, each attending to its own slice of keys.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_float64",
        band_logsumexp_float64,
        "correct",
        "float64 inside and cast back; weights as exp(score - logsumexp); an optional scale.",
    ),
]
