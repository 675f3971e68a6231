"""Blind set B16, check_banded_attention (chapter 20): local (banded) attention as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _masked_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """Right attention under a boolean mask (True = may attend), zero for a query without keys;
    shared by the mistakes that are elsewhere."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = mask.expand_as(scores)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device: torch.device) -> Tensor:
    """``t - s`` for every query ``t`` (rows) and key ``s`` (columns)."""
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window  # "closer than the window"
    if causal:
        band &= d >= 0
    return _masked_attention(q, k, v, band & _padding(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # window frames on each side, besides the neighbour
    if causal:
        band &= d >= 0
    return _masked_attention(q, k, v, band & _padding(key_padding))


def band_slice_end_left_out(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype, device=v.device)
    for t in range(T):
        lo, hi = max(0, t - window), t if causal else t + window  # slice ends are exclusive
        if hi <= lo:
            continue
        keys = torch.zeros(T, dtype=torch.bool, device=q.device)
        keys[lo:hi] = True
        mask = keys & _padding(key_padding)
        out[:, :, t : t + 1] = _masked_attention(q[:, :, t : t + 1], k, v, mask)
    return out


def band_always_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the window looks back
    return _masked_attention(q, k, v, band & _padding(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _masked_attention(q, k, v, (d.abs() <= window) & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    if causal:
        band = band.triu()  # upper triangle kept
    return _masked_attention(q, k, v, band & _padding(key_padding))


def band_zero_padded_windows(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    ks = F.pad(k, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1): zeros at ends
    vs = F.pad(v, (0, 0, w, w)).unfold(2, 2 * w + 1, 1)  # (B, H, T, Dv, 2w+1)
    scores = (q.unsqueeze(-2) @ ks).squeeze(-2) / math.sqrt(Dh)  # (B, H, T, 2w+1)
    c = torch.arange(2 * w + 1, device=q.device)  # key t - w + c
    allowed = (c <= w) if causal else torch.ones_like(c, dtype=torch.bool)
    allowed = allowed.expand(T, -1)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w+1)
        allowed = allowed & real[:, None]
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return (weights.unsqueeze(-2) @ vs.transpose(-2, -1)).squeeze(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    rel = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + rel).clamp(0, T - 1)  # (T, W)
    ks, vs = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (ks @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(Dh)  # (B, H, T, W)
    if key_padding is not None:
        real = key_padding[:, idx][:, None]  # (B, 1, T, W)
        scores = scores.masked_fill(~real, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return (weights.unsqueeze(-2) @ vs).squeeze(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    rel = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + rel) % T  # a ring of frames
    ks, vs = k[:, :, idx], v[:, :, idx]
    scores = (ks @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(Dh)
    if key_padding is not None:
        scores = scores.masked_fill(~key_padding[:, idx][:, None], float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return (weights.unsqueeze(-2) @ vs).squeeze(-2)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    return _masked_attention(q, k, v, band.triu(-window))


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band if key_padding is None else band & ~key_padding[:, None, None, :]
    return _masked_attention(q, k, v, mask)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band if key_padding is None else band & key_padding[:, None, :, None]  # (B,1,T,1)
    return _masked_attention(q, k, v, mask)


def band_nan_for_empty(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d <= window) & (d >= (0 if causal else -window)) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)  # a frame with no key: NaN
    return weights @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d <= window) & (d >= (0 if causal else -window)) & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d <= window) & (d >= (0 if causal else -window)) & _padding(key_padding)
    mask = mask.expand(*q.shape[:2], q.shape[2], q.shape[2])
    scores = q @ k.transpose(-2, -1)  # the scale is for long sequences, I thought
    has_key = mask.any(-1, keepdim=True)
    weights = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0).softmax(-1)
    return weights.masked_fill(~has_key, 0) @ v


# ---------------------------------------------------------------- correct variants


def band_full_mask(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    """Full attention under a band mask made of |t - s|; torch.where for the empty rows."""
    T = q.shape[-2]
    pos = torch.arange(T, device=q.device)
    diff = pos.view(T, 1) - pos.view(1, T)  # t - s
    mask = diff.abs() <= window
    if causal:
        mask = mask & (diff >= 0)
    if key_padding is not None:
        mask = mask & key_padding.view(-1, 1, 1, T)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * scale
    scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=q.dtype))
    empty = ~mask.any(dim=-1, keepdim=True)
    scores = torch.where(empty, torch.zeros_like(scores), scores)
    weights = torch.where(empty, torch.zeros_like(scores), scores.softmax(dim=-1))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    """One frame at a time over its slice of keys; padding masked inside the slice."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        scores = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-1, -2)) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi].expand_as(scores)
        else:
            real = torch.ones_like(scores, dtype=torch.bool)
        any_real = real.any(-1, keepdim=True)
        scores = scores.masked_fill(~real, float("-inf")).masked_fill(~any_real, 0.0)
        w = scores.softmax(-1) * any_real
        outs.append(w @ v[:, :, lo:hi])  # (B, H, 1, Dv)
    return torch.cat(outs, dim=2)


def band_sliding_windows(q, k, v, window, causal=False, key_padding=None):
    """Each frame's 2w + 1 neighbours cut out with unfold; the padded ends and padding masked."""
    B, H, T, Dh = q.shape
    w = min(window, T)
    width = 2 * w + 1
    ks = F.pad(k, (0, 0, w, w)).unfold(2, width, 1)  # (B, H, T, Dh, width)
    vs = F.pad(v, (0, 0, w, w)).unfold(2, width, 1)  # (B, H, T, Dv, width)
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    real = F.pad(real, (w, w), value=False).unfold(1, width, 1)[:, None]  # (B, 1, T, width)
    c = torch.arange(width, device=q.device)
    allowed = real & ((c <= w) if causal else torch.ones_like(c, dtype=torch.bool))
    scores = torch.einsum("bhtd,bhtdc->bhtc", q, ks) / math.sqrt(Dh)
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return torch.einsum("bhtc,bhtdc->bhtd", weights, vs)


def band_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention under the band mask; rows without keys zeroed after."""
    T = q.shape[2]
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    mask = mask.triu(-window).expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    empty = ~mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty)
    return out.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I kept the keys with |t - s| < window, one frame too few on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, one frame too many on each side.",
    ),
    BlindCase(
        CHECK,
        "slice_end_left_out",
        band_slice_end_left_out,
        "mistake",
        "I looped over the frames with the slice k[t - window : t + window] (t when causal), "
        "whose end is excluded: a frame short on the right, and a causal frame does not see "
        "itself.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_one_sided,
        "mistake",
        "My band is 0 <= t - s <= window also when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used the causal flag: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept the upper triangle of the band (triu), so each frame sees the next "
        "frames instead of the previous ones.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_windows",
        band_zero_padded_windows,
        "mistake",
        "I padded k and v with window zeros at both ends and cut 2w + 1 windows, but did not "
        "mask the zero frames, so the first and last frames attend to them.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gathered the keys at t - w .. t + w clamped to 0 .. T - 1, so the frames at the ends "
        "see the first or last frame several times.",
    ),
    BlindCase(
        CHECK,
        "indices_wrap_around",
        band_wraps_around,
        "mistake",
        "I gathered the keys at (t + offset) % T, so the band wraps around the sequence's ends.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band with tril/triu and never used key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I combined the band with ~key_padding, as if True marked the padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I shaped key_padding as (B, 1, T, 1), which masks the padded queries instead of keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_keys",
        band_nan_for_empty,
        "mistake",
        "A plain softmax after filling -inf: a frame whose neighbours are all padding gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a frame with no key averages the values of "
        "all frames instead of giving zeros.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I left out the 1 / sqrt(Dh) scale.",
    ),
    BlindCase(
        CHECK,
        "full_band_mask_einsum",
        band_full_mask,
        "correct",
        "Full T x T attention with einsum under |t - s| <= window, torch.where for the -inf and "
        "the empty rows, an extra scale argument.",
    ),
    BlindCase(
        CHECK,
        "frame_loop",
        band_frame_loop,
        "correct",
        "A Python loop over the frames, each attending to its slice of keys with the padding "
        "masked inside the slice, the outputs concatenated.",
    ),
    BlindCase(
        CHECK,
        "sliding_windows_unfold",
        band_sliding_windows,
        "correct",
        "Each frame's 2w + 1 neighbours cut out with F.pad and unfold; the padded ends, the "
        "future (when causal) and the padding masked: O(T * w).",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_empty_rows_zeroed",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band & padding mask; a frame without keys is "
        "given every key and its output set to zero afterwards.",
    ),
]
