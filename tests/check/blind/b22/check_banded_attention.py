"""Blind set B22, check_banded_attention (chapter 20): local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention, masked_softmax
from transformer_tutorial.local_attention import band_mask

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device) -> Tensor:
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]  # (T, T): t - s


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Scores, a masked softmax that gives zeros to a row with no key, and the values."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    return masked_softmax(scores, mask) @ v


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict_less(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() < window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_one_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window + 1
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_range_end_excluded(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        last = t if causal else t + window
        band[t, max(0, t - window) : last] = True  # keys t - window .. last
    return _attend(q, k, v, band & _padding(key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) & (d <= window)  # the past and the frame itself
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    return _attend(q, k, v, (d.abs() <= window) & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    pos = torch.arange(q.shape[-2], device=q.device)
    d = pos[None, :] - pos[:, None]  # s - t
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    """Each frame gathers 2w + 1 keys from a zero-padded sequence; the padding frames are
    scored like keys."""
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))
    vp = F.pad(v, (0, 0, w, w))
    k_win = kp.unfold(2, 2 * w + 1, 1).transpose(-1, -2)  # (B, H, T, 2w+1, Dh)
    v_win = vp.unfold(2, 2 * w + 1, 1).transpose(-1, -2)
    scores = (q[..., None, :] * k_win).sum(-1) / math.sqrt(Dh)  # (B, H, T, 2w+1)
    offs = torch.arange(-w, w + 1, device=q.device)  # s - t
    valid = torch.ones(B, T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        valid &= offs <= 0
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True)  # the zero frames count as real
        valid &= real.unfold(1, 2 * w + 1, 1)
    weights = masked_softmax(scores, valid[:, None])
    return (weights[..., None] * v_win).sum(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs).clamp(0, T - 1)  # (T, n)
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = (q[..., None, :] * k_win).sum(-1) / math.sqrt(Dh)
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    valid = real[:, idx][:, None]  # (B, 1, T, n)
    weights = masked_softmax(scores, valid)
    return (weights[..., None] * v_win).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T, q.device) % T  # circular distance
    d = torch.minimum(d, T - d) if not causal else d
    band = d <= window
    if causal:
        band &= (d >= 0) & (d <= window)
    return _attend(q, k, v, band & _padding(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, band_mask(q.shape[-2], window, causal, q.device))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = band_mask(q.shape[-2], window, causal, q.device)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = band_mask(q.shape[-2], window, causal, q.device)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal, q.device) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal, q.device) & _padding(key_padding)
    return _attend(q, k, v, mask, scale=1.0)


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal, q.device) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


# ---------------------------------------------------------------- correct variants


def band_abs_offsets(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed = allowed & (d >= 0)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) / math.sqrt(q.shape[-1])
        real = None if key_padding is None else key_padding[:, None, None, lo:hi]
        weights = masked_softmax(scores, real)  # (B, H, 1, hi - lo)
        outs.append(weights @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def band_sdpa_safe_rows(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal, q.device) & _padding(key_padding)
    mask = mask.expand(q.shape[0], 1, q.shape[-2], q.shape[-2])
    has_key = mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    safe = mask | ~has_key  # a row with no key may look anywhere; zeroed below
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out * has_key


def band_package_attention(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal, q.device)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask)
    return out


CASES = [
    BlindCase(
        CHECK,
        "band_strict_less",
        band_strict_less,
        "mistake",
        "I wrote |t - s| < window, one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_one_too_wide",
        band_one_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, counting the frame itself as one of the w.",
    ),
    BlindCase(
        CHECK,
        "range_end_excluded",
        band_range_end_excluded,
        "mistake",
        "I filled the mask with band[t, t - w : t + w], so the last frame on the right (and "
        "the frame itself when causal) is left out.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "My band is 0 <= t - s <= w whatever causal says: one-sided even when two-sided is asked.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I built |t - s| <= w and forgot to apply causal.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "I computed the offset as s - t, so causal keeps the future frames instead of the past.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_padded_keys,
        "mistake",
        "I padded the sequence with w zero frames on both sides and unfolded windows; the zero "
        "frames are scored as keys at the ends.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gathered keys at t + offset clamped to [0, T - 1], so the end frames see the first "
        "or last frame several times.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I took the offset modulo T, so the band wraps around from the end to the start.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I applied the band mask and forgot key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I combined the band with ~key_padding, thinking True marks padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), so it masks query rows instead of keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        band_nan_rows,
        "mistake",
        "Plain softmax after -inf: a frame with no visible key gets NaN, not zeros.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9, so a frame with no key averages every value "
        "instead of returning zeros.",
    ),
    BlindCase(
        CHECK,
        "abs_offsets_einsum",
        band_abs_offsets,
        "correct",
        "A (T, T) offset matrix, |t - s| <= w, einsum for scores and output, nan_to_num after "
        "the softmax.",
    ),
    BlindCase(
        CHECK,
        "frame_loop",
        band_frame_loop,
        "correct",
        "A loop over frames, each scoring only its slice of keys, with the package's "
        "masked_softmax for padding.",
    ),
    BlindCase(
        CHECK,
        "sdpa_safe_rows",
        band_sdpa_safe_rows,
        "correct",
        "F.scaled_dot_product_attention under the band mask; rows with no key get a dummy "
        "mask and are zeroed afterwards.",
    ),
    BlindCase(
        CHECK,
        "package_attention_band_mask",
        band_package_attention,
        "correct",
        "The package's band_mask and attention, at the full T^2 price.",
    ),
]
