"""Blind set B33, check_banded_attention (chapter 20): banded local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _masked_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float) -> Tensor:
    """Full attention under a boolean mask (True = may attend); a row with no key gets zeros."""
    scores = (q @ k.transpose(-2, -1)) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _padding(key_padding: Tensor | None, q: Tensor) -> Tensor:
    B, _, T, _ = q.shape
    if key_padding is None:
        return torch.ones(B, T, dtype=torch.bool, device=q.device)
    return key_padding


# ---------------------------------------------------------------- mistakes


def banded_strict_less(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = diff.abs() < window  # frames closer than the window
    if causal:
        band = band & (diff >= 0)
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


def banded_window_plus_one(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = diff.abs() <= window + 1  # window frames on each side, plus the next one
    if causal:
        band = band & (diff >= 0)
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


def banded_loop_range_end(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    real = _padding(key_padding, q)
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype)
    outs = []
    for t in range(T):
        lo = max(0, t - window)
        hi = t if causal else min(T - 1, t + window)
        keys = list(range(lo, hi))  # from t - w to t + w
        if not keys:
            outs.append(out[:, :, t])
            continue
        idx = torch.tensor(keys)
        scores = (q[:, :, t : t + 1] @ k[:, :, idx].transpose(-2, -1)) / math.sqrt(Dh)
        m = real[:, idx][:, None, None, :]
        w = _softmax_rows(scores, m)
        outs.append((w @ v[:, :, idx])[:, :, 0])
    return torch.stack(outs, dim=2)


def _softmax_rows(scores: Tensor, m: Tensor) -> Tensor:
    m = m.expand_as(scores)
    has = m.any(-1, keepdim=True)
    s = scores.masked_fill(~m, float("-inf")).masked_fill(~has, 0.0)
    return s.softmax(-1).masked_fill(~has, 0.0)


def banded_always_causal(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff >= 0) & (diff <= window)  # a frame looks back w frames
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


def banded_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    band = (t[:, None] - t[None, :]).abs() <= window
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


def banded_causal_wrong_side(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    mask = torch.ones(T, T, dtype=torch.bool).tril(window).triu(-window)
    if causal:
        mask = mask.triu()  # keep s >= t
    mask = mask & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(q.shape[-1]))


def banded_zero_pad_keys(q, k, v, window, causal=False, key_padding=None):
    """Gathers 2w + 1 keys for every frame from zero-padded k and v."""
    B, H, T, Dh = q.shape
    w = window
    real = _padding(key_padding, q)
    kp = F.pad(k, (0, 0, w, w))  # (B, H, T + 2w, Dh)
    vp = F.pad(v, (0, 0, w, w))
    rp = F.pad(real, (w, w), value=True)  # the pads are not padding frames, they are zeros
    idx = torch.arange(T)[:, None] + torch.arange(2 * w + 1)[None, :]  # (T, 2w+1)
    kw, vw, rw = kp[:, :, idx], vp[:, :, idx], rp[:, idx]  # (B, H, T, 2w+1, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, 2w+1)
    offset = torch.arange(2 * w + 1) - w  # s - t
    m = rw[:, None]
    if causal:
        m = m & (offset <= 0)
    weights = _softmax_rows(scores, m)
    return (weights[..., None] * vw).sum(-2)


def banded_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    real = _padding(key_padding, q)
    offset = torch.arange(-w, (0 if causal else w) + 1)
    idx = (torch.arange(T)[:, None] + offset[None, :]).clamp(0, T - 1)  # stay inside
    kw, vw, rw = k[:, :, idx], v[:, :, idx], real[:, idx]
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    weights = _softmax_rows(scores, rw[:, None])
    return (weights[..., None] * vw).sum(-2)


def banded_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    real = _padding(key_padding, q)
    offset = torch.arange(-w, (0 if causal else w) + 1)
    offset = offset[offset.abs() < T] if w >= T else offset
    idx = (torch.arange(T)[:, None] + offset[None, :]) % T  # negative indices wrap
    kw, vw, rw = k[:, :, idx], v[:, :, idx], real[:, idx]
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    weights = _softmax_rows(scores, rw[:, None])
    return (weights[..., None] * vw).sum(-2)


def banded_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    return _masked_attention(q, k, v, band, 1 / math.sqrt(q.shape[-1]))


def banded_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True marks the padding
    return _masked_attention(q, k, v, band, 1 / math.sqrt(q.shape[-1]))


def banded_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _masked_attention(q, k, v, band, 1 / math.sqrt(q.shape[-1]))


def banded_nan_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    mask = band & _padding(key_padding, q)[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights @ v


def banded_no_scale(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1.0)


def banded_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    mask = band & _padding(key_padding, q)[:, None, None, :]
    return _masked_attention(q, k, v, mask, 1 / math.sqrt(v.shape[-1]))


def banded_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = (diff <= window) & (diff >= (0 if causal else -window))
    mask = band & _padding(key_padding, q)[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


# ---------------------------------------------------------------- correct variants


def banded_band_mask(q, k, v, window, causal=False, key_padding=None):
    from transformer_tutorial.attention import attention
    from transformer_tutorial.local_attention import band_mask

    T = q.shape[2]
    mask = band_mask(T, window, causal, device=q.device)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask)
    return out


def banded_loop_per_frame(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    real = _padding(key_padding, q)
    outs = []
    for t in range(T):
        lo = max(0, t - window)
        hi = t if causal else min(T - 1, t + window)
        idx = torch.arange(lo, hi + 1)
        scores = (q[:, :, t : t + 1] @ k[:, :, idx].transpose(-2, -1)) / math.sqrt(Dh)
        w = _softmax_rows(scores, real[:, idx][:, None, None, :])
        outs.append((w @ v[:, :, idx])[:, :, 0])
    return torch.stack(outs, dim=2)


def banded_gather_windows(q, k, v, window, causal=False, key_padding=None):
    """2w + 1 neighbours gathered per frame; the ones outside the sequence are masked."""
    B, H, T, Dh = q.shape
    w = min(window, T)
    real = _padding(key_padding, q)
    offset = torch.arange(-w, (0 if causal else w) + 1)
    pos = torch.arange(T)[:, None] + offset[None, :]  # (T, n)
    inside = (pos >= 0) & (pos < T)
    idx = pos.clamp(0, T - 1)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    valid = inside[None] & real[:, idx]  # (B, T, n)
    scores = torch.einsum("bhtd,bhtnd->bhtn", q, kw) * Dh**-0.5
    weights = _softmax_rows(scores, valid[:, None])
    return torch.einsum("bhtn,bhtnd->bhtd", weights, vw)


def banded_logsumexp(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    allowed = (j >= i - window) & (j <= i + window)
    if causal:
        allowed = allowed & (j <= i)
    if key_padding is not None:
        allowed = allowed & key_padding.view(-1, 1, 1, T)
    allowed = allowed.expand(q.shape[0], q.shape[1], T, T)
    scores = torch.matmul(q / math.sqrt(q.size(-1)), k.transpose(-1, -2))
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    any_key = allowed.any(-1, keepdim=True)
    safe = torch.where(any_key, scores, torch.zeros_like(scores))
    weights = torch.exp(safe - torch.logsumexp(safe, -1, keepdim=True))
    weights = torch.where(allowed, weights, torch.zeros_like(weights))
    return torch.matmul(weights, v)


CASES = [
    BlindCase(
        CHECK,
        "strict_less_than_window",
        banded_strict_less,
        "mistake",
        "I kept the frames with |t - s| < window, so the band is one frame too narrow.",
    ),
    BlindCase(
        CHECK,
        "window_plus_one",
        banded_window_plus_one,
        "mistake",
        "I allowed |t - s| <= window + 1, thinking the window does not count the frame itself.",
    ),
    BlindCase(
        CHECK,
        "loop_range_end_left_out",
        banded_loop_range_end,
        "mistake",
        "I looped over the frames and took range(t - w, t + w) as the keys, so the last key "
        "(t + w, or t itself when causal) is missing.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        banded_always_causal,
        "mistake",
        "I only looked back w frames, for causal and non-causal alike.",
    ),
    BlindCase(
        CHECK,
        "causal_flag_ignored",
        banded_causal_ignored,
        "mistake",
        "I built the two-sided band and forgot to use the causal flag.",
    ),
    BlindCase(
        CHECK,
        "causal_wrong_triangle",
        banded_causal_wrong_side,
        "mistake",
        "For causal I cut the band with triu() instead of tril(), so a frame sees the next "
        "w frames instead of the previous ones.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_keys_counted",
        banded_zero_pad_keys,
        "mistake",
        "I padded k and v with w zero frames at each end and always gathered 2w + 1 keys, so "
        "the frames near the ends also attend to those zero vectors.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        banded_clamped_indices,
        "mistake",
        "I gathered the keys t - w .. t + w and clamped the indices to 0 .. T - 1, so the first "
        "and last frames are counted several times near the ends.",
    ),
    BlindCase(
        CHECK,
        "indices_wrap_around",
        banded_wraps_around,
        "mistake",
        "I took the neighbour indices modulo T, so the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        banded_padding_ignored,
        "mistake",
        "I only applied the band and never used key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        banded_padding_inverted,
        "mistake",
        "I treated True in key_padding as a padding frame and masked it.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        banded_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), which masks the padded queries instead of the "
        "padded keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        banded_nan_rows,
        "mistake",
        "I filled masked scores with -inf and took a plain softmax; a frame with no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        banded_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "scale_by_dv",
        banded_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt of v's last dimension instead of q's.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        banded_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a frame with no key averages all the values.",
    ),
    BlindCase(
        CHECK,
        "package_band_mask",
        banded_band_mask,
        "correct",
        "Full attention from the package under band_mask(T, window, causal) & key_padding.",
    ),
    BlindCase(
        CHECK,
        "loop_per_frame",
        banded_loop_per_frame,
        "correct",
        "A loop over the frames, each attending to the slice max(0, t - w) .. min(T - 1, t + w) "
        "(or .. t when causal), padding masked, zeros for an empty row.",
    ),
    BlindCase(
        CHECK,
        "gather_windows_einsum",
        banded_gather_windows,
        "correct",
        "The neighbours gathered into windows with clamped indices, but the ones outside the "
        "sequence masked; einsum for the products.",
    ),
    BlindCase(
        CHECK,
        "where_logsumexp",
        banded_logsumexp,
        "correct",
        "The band built from two index comparisons, the weights as exp(score - logsumexp) with "
        "torch.where for the masked keys and the empty rows.",
    ),
]
