"""Blind set B17, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Right masked attention (a row without keys gives zeros), shared by the mistakes whose
    slip is in the mask."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    """t - s for every query t (rows) and key s (columns)."""
    idx = torch.arange(T, device=device)
    return idx[:, None] - idx[None, :]


def _padding(mask: Tensor, key_padding: Tensor | None) -> Tensor:
    if key_padding is None:
        return mask
    return mask & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)  # < instead of <=
    return _attend(q, k, v, _padding(band, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)  # "window on each side"
    return _attend(q, k, v, _padding(band, key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        stop = t + 1 if causal else t + window  # range(t - w, t + w): the end left out
        for s in range(max(0, t - window), min(T, stop)):
            band[t, s] = True
    band[range(T), range(T)] = True  # each frame sees itself
    return _attend(q, k, v, _padding(band, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) & (d <= window)  # the past only: a streaming window
    return _attend(q, k, v, _padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[-2], q.device).abs() <= window
    return _attend(q, k, v, _padding(band, key_padding))


def band_causal_wrong_axis(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    if causal:
        band = band.triu()  # keep s >= t
    return _attend(q, k, v, _padding(band, key_padding))


def band_zero_pad_counted(q, k, v, window, causal=False, key_padding=None):
    """Blocked by frame: the keys t - w .. t + w gathered from a zero-padded sequence."""
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))  # zeros outside the sequence
    vp = F.pad(v, (0, 0, w, w))
    kw = kp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)  # (B, H, T, 2w+1, Dh)
    vw = vp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)
    scores = (q.unsqueeze(-2) @ kw.transpose(-2, -1)).squeeze(-2) / math.sqrt(Dh)  # (B,H,T,2w+1)
    rel = torch.arange(-w, w + 1, device=q.device)  # s - t
    mask = torch.ones(B, 1, T, 2 * w + 1, dtype=torch.bool, device=q.device)
    if causal:
        mask = mask & (rel <= 0)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        mask = mask & real[:, None]
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return (weights.unsqueeze(-2) @ vw).squeeze(-2)


def band_indices_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    t = torch.arange(T, device=q.device)
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)
    idx = (t[:, None] + offs[None, :]).clamp(0, T - 1)  # (T, n): stay inside the sequence
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = (q.unsqueeze(-2) * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, n)
    mask = torch.ones_like(scores, dtype=torch.bool)
    if key_padding is not None:
        mask = mask & key_padding[:, idx][:, None]
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return (weights.unsqueeze(-1) * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T, q.device) % T  # circular distance, like torch.roll
    dist = torch.minimum(d, T - d) if not causal else d
    band = dist <= window
    return _attend(q, k, v, _padding(band, key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding, I thought
    return _attend(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # (B, 1, T, 1): the rows
    return _attend(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = _padding(band, key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)  # NaN where no key
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, _padding(band, key_padding), scale=1.0)


def band_scale_by_window(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    n_keys = 2 * window + 1  # scale by the keys a query sees
    return _attend(q, k, v, _padding(band, key_padding), scale=1.0 / math.sqrt(n_keys))


# ---------------------------------------------------------------- correct variants


def band_full_masked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full T x T attention under a band mask from tril/triu; empty rows zeroed with
    torch.where."""
    T = q.size(-2)
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = torch.tril(ones, diagonal=0 if causal else window) & torch.triu(ones, diagonal=-window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.size(-1))
    empty = ~mask.any(dim=-1, keepdim=True)
    scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    scores = torch.where(empty, torch.zeros_like(scores), scores)
    weights = torch.where(empty, torch.zeros_like(scores), torch.softmax(scores, dim=-1))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_sliding_window(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Blocked by frame: each frame's 2w + 1 neighbours cut with F.pad + unfold, the frames
    outside the sequence masked like padding. O(T w) memory."""
    B, H, T, Dh = q.shape
    w = window
    n = 2 * w + 1
    kw = F.pad(k, (0, 0, w, w)).unfold(2, n, 1)  # (B, H, T, Dh, n)
    vw = F.pad(v, (0, 0, w, w)).unfold(2, n, 1)  # (B, H, T, Dv, n)
    scores = torch.einsum("bhtd,bhtdn->bhtn", q, kw) * Dh**-0.5
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    real = F.pad(real, (w, w), value=False).unfold(1, n, 1)  # (B, T, n): outside = False
    rel = torch.arange(-w, w + 1, device=q.device)  # s - t
    mask = real[:, None] & ((rel <= 0) if causal else torch.ones_like(rel, dtype=torch.bool))
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1) * has_key
    return torch.einsum("bhtn,bhtdn->bhtd", weights, vw)


def band_sdpa_safe(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    dropout_p: float = 0.0,
) -> Tensor:
    """F.scaled_dot_product_attention under the band mask; a row with no key is given every
    key (so no NaN) and its output multiplied by 0; an optional dropout_p."""
    T = q.shape[-2]
    t = torch.arange(T, device=q.device)
    rel = t[None, :] - t[:, None]  # s - t
    band = (rel <= (0 if causal else window)) & (rel >= -window)
    mask = band.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding.view(-1, 1, 1, T)
    has_key = mask.any(-1, keepdim=True)
    safe = mask | ~has_key
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe, dropout_p=dropout_p)
    return out * has_key.to(out.dtype)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <=, one frame too few on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I filled the mask with range(t - window, t + window), which leaves out t + window, "
        "one frame short on the right.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I always used the one-sided (past-only) band, also when causal=False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I built the two-sided band and never looked at causal.",
    ),
    BlindCase(
        CHECK,
        "causal_wrong_axis",
        band_causal_wrong_axis,
        "mistake",
        "For causal I kept the upper triangle (triu), s >= t, so frames look ahead.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_pad_counted,
        "mistake",
        "My blocked version pads k and v with zeros at both ends and does not mask those "
        "positions, so frames near the ends attend to zero keys.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_indices_clamped,
        "mistake",
        "I gathered the neighbours t + offset clamped to 0 .. T - 1, so the end frames are "
        "counted several times.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance circularly (as with torch.roll), so the band wraps around "
        "from the last frames to the first.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I applied the band mask but forgot key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, taking True for padding.",
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
        "nan_for_empty_rows",
        band_nan_rows,
        "mistake",
        "Plain masked_fill(-inf) and softmax: a frame with no visible key gets NaN.",
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
        "scale_by_band_width",
        band_scale_by_window,
        "mistake",
        "I scaled by 1 / sqrt(2 * window + 1), the number of keys, instead of 1 / sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "full_masked_einsum",
        band_full_masked,
        "correct",
        "Full T x T attention with einsum under a tril/triu band mask; torch.where for the fills.",
    ),
    BlindCase(
        CHECK,
        "sliding_window_unfold",
        band_sliding_window,
        "correct",
        "Blocked by frame: 2w + 1 neighbours cut with F.pad + unfold, frames outside the "
        "sequence masked like padding.",
    ),
    BlindCase(
        CHECK,
        "sdpa_safe_rows",
        band_sdpa_safe,
        "correct",
        "F.scaled_dot_product_attention with the band mask; empty rows given all keys, then "
        "multiplied by 0; an optional dropout_p.",
    ),
]
