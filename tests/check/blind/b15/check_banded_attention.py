"""Blind set B15, check_banded_attention (chapter 20): banded local attention as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: bool = True) -> Tensor:
    """Attention under a boolean mask (True = may attend), zeros for a row with no key."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    allowed = allowed.expand_as(scores)
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # t - s


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window  # < where <= is meant
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding))


def band_range_end(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t if causal else min(T - 1, t + window)
        band[t, max(0, t - window) : hi] = True  # the end of the slice left out
    return _attend(q, k, v, band & _padding(key_padding))


def band_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the past only, also when not causal
    return _attend(q, k, v, band & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d <= 0  # s >= t: the wrong side
    return _attend(q, k, v, band & _padding(key_padding))


def band_tril_triu_swapped(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.triu(-window).tril(window)
    if causal:
        band = band.triu()  # keeps s >= t
    return _attend(q, k, v, band & _padding(key_padding))


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    """Windows cut from keys padded with zeros at both ends, zeros counted as keys."""
    T, w = q.shape[2], window
    kp = F.pad(k, (0, 0, w, w))
    vp = F.pad(v, (0, 0, w, w))
    kw = kp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)  # (B, H, T, 2w+1, Dh)
    vw = vp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])  # (B, H, T, 2w+1)
    rel = torch.arange(-w, w + 1, device=q.device)
    allowed = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        allowed &= rel <= 0
    if key_padding is not None:
        kpad = F.pad(key_padding, (w, w), value=True)  # the added zeros count as real
        allowed &= kpad.unfold(1, 2 * w + 1, 1)[:, None]
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(-1).nan_to_num()
    return (weights[..., None] * vw).sum(-2)[:, :, :T]


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # circular distance
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band &= (d <= window) | (d == 0)
    return _attend(q, k, v, band & _padding(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    pad = True if key_padding is None else key_padding[:, None, :, None]
    return _attend(q, k, v, band & pad)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    pad = True if key_padding is None else ~key_padding[:, None, None, :]
    return _attend(q, k, v, band & pad)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~(band & _padding(key_padding)), float("-inf"))
    return scores.softmax(-1) @ v  # a row of -inf gives NaN


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d >= 0
    return _attend(q, k, v, band & _padding(key_padding), scale=False)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    """Gathers 2w+1 keys per frame with indices clamped into 0 .. T-1."""
    T, w = q.shape[2], window
    idx = (torch.arange(T)[:, None] + torch.arange(-w, w + 1)[None, :]).clamp(0, T - 1)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, 2w+1, D)
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(q.shape[-1])
    allowed = torch.ones(T, 2 * w + 1, dtype=torch.bool)
    if causal:
        allowed &= torch.arange(-w, w + 1) <= 0
    allowed = allowed.expand_as(scores)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, idx]
    has = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has, 0.0)
    weights = scores.softmax(-1).masked_fill(~has, 0.0)
    return (weights[..., None] * vw).sum(-2)


# ---------------------------------------------------------------- correct variants


def band_full_mask(q, k, v, window, causal=False, key_padding=None):
    """Full attention under |t - s| <= w built from arange."""
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    return _attend(q, k, v, band & _padding(key_padding))


def band_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention with the band mask, empty rows zeroed afterwards."""
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    mask = band & _padding(key_padding)
    mask = mask.expand(q.shape[0], q.shape[1], T, T)
    empty = ~mask.any(-1, keepdim=True)
    safe = mask | empty  # let an empty row see everything, then zero it
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out.masked_fill(empty, 0.0)


def band_blocked_loop(q, k, v, window, causal=False, key_padding=None, block_size=None):
    """A loop over query frames, each attending to its slice of keys; extra block_size."""
    B, H, T, _ = q.shape
    out = q.new_zeros(B, H, T, v.shape[-1])
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        s = torch.einsum("bhd,bhsd->bhs", q[:, :, t], k[:, :, lo:hi]) / q.shape[-1] ** 0.5
        if key_padding is not None:
            s = s.masked_fill(~key_padding[:, None, lo:hi], float("-inf"))
        w = torch.where(torch.isinf(s).all(-1, keepdim=True), torch.zeros_like(s), s.softmax(-1))
        w = w.nan_to_num(0.0)
        out[:, :, t] = torch.einsum("bhs,bhsd->bhd", w, v[:, :, lo:hi])
    return out


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_strict,
        "mistake",
        "I wrote |t - s| < window instead of <= window.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end,
        "mistake",
        "I filled band[t, t - w : t + w] with a slice whose end leaves out frame t + w (and t "
        "itself when causal).",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_one_sided,
        "mistake",
        "My band only looks back (0 <= t - s <= w) even when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept s >= t instead of s <= t.",
    ),
    BlindCase(
        CHECK,
        "causal_triu",
        band_tril_triu_swapped,
        "mistake",
        "For causal I applied .triu() to the band, which keeps the upper triangle, the future.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_padded_keys,
        "mistake",
        "I padded k and v with w zeros at each end and cut windows; the zero keys at the ends "
        "are counted as real keys.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I measured |t - s| modulo T, so the first frames see the last ones.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I forgot to apply key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), masking query rows instead of key columns.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I treated True in key_padding as padding and masked with ~key_padding.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        band_nan_rows,
        "mistake",
        "A frame that sees no key gets softmax of all -inf: NaN instead of zeros.",
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
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gathered 2w + 1 keys per frame with indices clamped to 0 .. T-1, so the frames at "
        "the ends count their nearest frame several times.",
    ),
    BlindCase(
        CHECK,
        "full_attention_band_mask",
        band_full_mask,
        "correct",
        "Full attention under a band mask built from arange offsets.",
    ),
    BlindCase(
        CHECK,
        "sdpa_band",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention under the band mask; rows with no key zeroed.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_blocked_loop,
        "correct",
        "A loop over frames, each attending to its own slice of keys; an unused block_size "
        "argument with a default.",
    ),
]
