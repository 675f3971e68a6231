"""Blind set B10, check_banded_attention (chapter 20): local (banded) attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _full(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Full attention under a boolean mask (True = may attend), zeros for a row with no key."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]  # (T, T): t - s


def _with_padding(band: Tensor, key_padding: Tensor | None) -> Tensor:
    return band if key_padding is None else band & key_padding[:, None, None, :]


def _gather_band(q, k, v, window, causal, key_padding, ends: str) -> Tensor:
    """Keys t - window .. t + window gathered per query; ``ends`` says what happens outside."""
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, (0 if causal else window) + 1, device=q.device)  # (W,)
    idx = torch.arange(T, device=q.device)[:, None] + offs  # (T, W)
    inside = (idx >= 0) & (idx < T)
    if ends == "clamp":
        idx = idx.clamp(0, T - 1)
        inside = torch.ones_like(inside)
    elif ends == "wrap":
        idx = idx % T
        inside = torch.ones_like(inside)
    elif ends == "zeros":
        k = F.pad(k, (0, 0, window, window))  # zero frames at both ends, used as keys
        v = F.pad(v, (0, 0, window, window))
        idx = idx + window
        inside = torch.ones_like(inside)
    else:
        idx = idx.clamp(0, T - 1)
    kg, vg = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q[:, :, :, None, :] * kg).sum(-1) / math.sqrt(Dh)  # (B, H, T, W)
    mask = inside.expand(B, 1, T, len(offs))
    if key_padding is not None:
        real = key_padding
        if ends == "zeros":
            real = F.pad(key_padding, (window, window), value=True)
        mask = mask & real[:, idx][:, None]
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return (weights[..., None] * vg).sum(-2)


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)  # < instead of <=
    return _full(q, k, v, _with_padding(band, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window + 1).triu(-window - 1)  # one diagonal too many
    return _full(q, k, v, _with_padding(band, key_padding))


def band_range_end_excluded(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t if causal else t + window
        mask[t, max(0, t - window) : hi] = True  # range end left out: one key short on the right
    return _full(q, k, v, _with_padding(mask, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d >= 0) & (d <= window)  # one-sided whatever `causal` says
    return _full(q, k, v, _with_padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() <= window  # two-sided even when causal
    return _full(q, k, v, _with_padding(band, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(window).triu(0 if causal else -window)  # causal cut on the wrong side
    return _full(q, k, v, _with_padding(band, key_padding))


def band_zero_keys_at_ends(q, k, v, window, causal=False, key_padding=None):
    return _gather_band(q, k, v, window, causal, key_padding, "zeros")


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    return _gather_band(q, k, v, window, causal, key_padding, "clamp")


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    return _gather_band(q, k, v, window, causal, key_padding, "wrap")


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    return _full(q, k, v, band)  # key_padding never used


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # read as True = padding
    return _full(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # the query axis
    return _full(q, k, v, band)


def band_nan_for_empty(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    mask = _with_padding((d <= window) & (d >= (0 if causal else -window)), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)  # NaN where no key
    return weights @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    mask = _with_padding((d <= window) & (d >= (0 if causal else -window)), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, -1e9).softmax(-1)  # an empty row averages everything
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    mask = _with_padding((d <= window) & (d >= (0 if causal else -window)), key_padding)
    return _full(q, k, v, mask, scale=1.0)


# ---------------------------------------------------------------- correct variants


def band_full_with_offsets(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full attention under a band built from t - s offsets (not tril/triu); the book's
    NaN guard for rows with no key."""
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= 0) if causal else d.abs() <= window
    return _full(q, k, v, _with_padding(band, key_padding))


def band_gathered_keys(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Gathers each query's 2w + 1 (or w + 1) neighbours and masks those outside 0 .. T - 1:
    O(T w) scores."""
    return _gather_band(q, k, v, window, causal, key_padding, "mask")


def band_per_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """A loop over query frames, slicing each one's keys; padding as -inf; zeros when a frame
    has no key."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), min(T, t + (0 if causal else window) + 1)
        s = torch.einsum("bhd,bhkd->bhk", q[:, :, t], k[:, :, lo:hi]) / Dh**0.5
        if key_padding is None:
            outs.append(torch.einsum("bhk,bhkd->bhd", s.softmax(-1), v[:, :, lo:hi]))
            continue
        real = key_padding[:, None, lo:hi]  # (B, 1, n)
        s = s.masked_fill(~real, float("-inf"))
        any_real = real.any(-1, keepdim=True)  # (B, 1, 1)
        w = torch.where(any_real, s, torch.zeros_like(s)).softmax(-1) * any_real
        outs.append(torch.einsum("bhk,bhkd->bhd", w, v[:, :, lo:hi]))
    return torch.stack(outs, dim=2)


def band_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention with the band mask; rows with no key are given every key
    and then zeroed."""
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(0 if causal else window)
    mask = _with_padding(band.triu(-window), key_padding)
    if mask.dim() == 2:
        mask = mask.expand(q.shape[0], 1, T, T)
    empty = ~mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty)
    return out.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <=, a band one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "tril(window + 1).triu(-window - 1): I added one to be safe and the band is one frame "
        "too wide.",
    ),
    BlindCase(
        CHECK,
        "range_end_excluded",
        band_range_end_excluded,
        "mistake",
        "I filled the mask row by row with mask[t, t - w : t + w], leaving out the end, so a "
        "frame misses its key t + w (and itself when causal).",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "My band is 0 <= t - s <= w whatever causal says: one-sided where two-sided is asked.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used the causal flag, so a causal call still sees w frames of the future.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I cut with triu(0) instead of tril(0): the band keeps the w future frames "
        "and drops the past.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_keys_at_ends,
        "mistake",
        "I padded k and v with w zero frames at both ends and gathered 2w + 1 keys for every "
        "frame, so the zero frames count as keys near the ends.",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gathered keys t - w .. t + w with the indices clamped to 0 .. T - 1, so the end "
        "frames are counted several times.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I took the neighbour indices modulo T, so the band wraps around to the other end.",
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
        "I took key_padding as True = padding and masked with ~key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I indexed key_padding as [:, None, :, None], which masks padded queries instead of "
        "padded keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        band_nan_for_empty,
        "mistake",
        "masked_fill with -inf and a plain softmax: a frame that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled with -1e9 instead of -inf: a frame with no key averages every value instead "
        "of giving zeros.",
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
        "full_with_offsets",
        band_full_with_offsets,
        "correct",
        "Full attention under a band built from the t - s offset matrix instead of tril/triu.",
    ),
    BlindCase(
        CHECK,
        "gathered_keys",
        band_gathered_keys,
        "correct",
        "Gathers only each frame's neighbours (O(T w) scores) and masks the indices outside "
        "the sequence.",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        band_per_frame_loop,
        "correct",
        "A Python loop over the frames, slicing each one's keys, with einsum; zeros when no key "
        "is real.",
    ),
    BlindCase(
        CHECK,
        "sdpa_safe_mask",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band mask; rows with no key attend to "
        "everything and are then zeroed.",
    ),
]
