"""Blind set B27, check_banded_attention (chapter 20): banded local attention as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention
from transformer_tutorial.local_attention import band_mask

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Masked attention with zeros for a query that sees no key (the package's)."""
    return attention(q, k, v, mask, scale=scale)[0]


def _padding(key_padding: Tensor | None) -> Tensor | None:
    return None if key_padding is None else key_padding[:, None, None, :]


def _with_padding(band: Tensor, key_padding: Tensor | None) -> Tensor:
    padding = _padding(key_padding)
    return band if padding is None else band & padding


# ---------------------------------------------------------------- mistakes


def band_strict(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    t = torch.arange(T)
    offset = t[:, None] - t[None, :]  # t - s
    band = offset.abs() < window
    if causal:
        band &= offset >= 0
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype)
    for t in range(T):
        lo = max(0, t - window)
        hi = t + 1 if causal else min(T, t + window)  # the frames t - w .. t + w
        keys = list(range(lo, hi))
        mask = torch.ones(B, 1, 1, len(keys), dtype=torch.bool)
        if key_padding is not None:
            mask = key_padding[:, keys][:, None, None, :]
        out[:, :, t : t + 1] = _attend(q[:, :, t : t + 1], k[:, :, keys], v[:, :, keys], mask)
    return out


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool)
    band = ones.triu(0).tril(window) if causal else ones.tril(window).triu(-window)
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = band_mask(T, window)  # the band of chapter 12
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_no_lower_limit(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool)
    band = ones.tril(0) if causal else ones.tril(window)  # up to w frames ahead
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = band_mask(T, window, causal=True)  # a recognizer must not see the future
    return _attend(q, k, v, _with_padding(band, key_padding))


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))  # zero frames at both ends, so every frame has 2w + 1 keys
    vp = F.pad(v, (0, 0, w, w))
    keys = kp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)  # (B, H, T, 2w + 1, Dh)
    values = vp.unfold(2, 2 * w + 1, 1).transpose(-2, -1)
    scores = (q[..., None, :] * keys).sum(-1) / math.sqrt(Dh)  # (B, H, T, 2w + 1)
    rel = torch.arange(-w, w + 1)
    mask = torch.ones(B, 1, T, 2 * w + 1, dtype=torch.bool)
    if causal:
        mask = mask & (rel <= 0)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w + 1)
        mask = mask & real[:, None]
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-1))
    return (weights[..., None] * values).sum(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    rel = torch.arange(-window, 1 if causal else window + 1)
    idx = (torch.arange(T)[:, None] + rel).clamp(0, T - 1)  # (T, n): stay inside the sequence
    keys, values = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = torch.einsum("bhtd,bhtnd->bhtn", q, keys) / math.sqrt(Dh)
    mask = torch.ones(B, 1, T, len(rel), dtype=torch.bool)
    if key_padding is not None:
        mask = key_padding[:, idx][:, None]
    weights = _masked_weights(scores, mask)
    return torch.einsum("bhtn,bhtnd->bhtd", weights, values)


def _masked_weights(scores: Tensor, mask: Tensor) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    rel = range(-window, 1 if causal else window + 1)
    scores, values, masks = [], [], []
    for r in rel:
        k_r = torch.roll(k, shifts=-r, dims=2)  # k_r[t] = k[t + r]
        v_r = torch.roll(v, shifts=-r, dims=2)
        scores.append((q * k_r).sum(-1) / math.sqrt(Dh))
        values.append(v_r)
        real = torch.ones(B, T, dtype=torch.bool)
        if key_padding is not None:
            real = torch.roll(key_padding, shifts=-r, dims=1)
        masks.append(real[:, None].expand(B, H, T))
    scores, values, masks = torch.stack(scores, -1), torch.stack(values, -2), torch.stack(masks, -1)
    weights = _masked_weights(scores, masks)
    return (weights[..., None] * values).sum(-2)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = band_mask(T, window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]  # (B, 1, T, 1)
    return _attend(q, k, v, mask)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = band_mask(T, window, causal)
    if key_padding is not None:
        mask = mask & ~key_padding[:, None, None, :]  # True = padding, to be hidden
    return _attend(q, k, v, mask)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _attend(q, k, v, band_mask(q.shape[-2], window, causal))


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = _with_padding(band_mask(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    return _attend(q, k, v, _with_padding(band_mask(T, window, causal), key_padding), scale=1.0)


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = _with_padding(band_mask(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(mask == 0, -1e9)
    return scores.softmax(-1) @ v


def band_returns_weights(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    return attention(q, k, v, _with_padding(band_mask(T, window, causal), key_padding))


def band_scale_by_window(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    mask = _with_padding(band_mask(T, window, causal), key_padding)
    keys_seen = 2 * window + 1  # each frame attends to 2w + 1 keys
    return _attend(q, k, v, mask, scale=1.0 / math.sqrt(keys_seen))


# ---------------------------------------------------------------- correct variants


def band_full_arange(q, k, v, window, causal=False, key_padding=None):
    """Full attention under a band built from arange; empty rows guarded by hand."""
    T, Dh = q.shape[-2], q.shape[-1]
    t = torch.arange(T, device=q.device)
    diff = t.view(T, 1) - t.view(1, T)  # t - s
    allowed = (diff <= window) & (diff >= (0 if causal else -window))
    if key_padding is not None:
        allowed = allowed & key_padding.view(-1, 1, 1, T)
    scores = torch.matmul(q, k.transpose(-1, -2)) / Dh**0.5
    scores = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    return torch.matmul(weights, v)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    """One frame at a time over its own slice of keys; padding removed from the slice."""
    B, H, T, Dh = q.shape
    out = q.new_zeros(B, H, T, v.shape[-1], dtype=v.dtype)
    rows = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        per_batch = []
        for b in range(B):
            keep = torch.arange(lo, hi)
            if key_padding is not None:
                keep = keep[key_padding[b, lo:hi]]
            if len(keep) == 0:
                per_batch.append(out[b, :, t])
                continue
            s = (q[b, :, t : t + 1] @ k[b, :, keep].transpose(-1, -2)) / math.sqrt(Dh)
            per_batch.append((s.softmax(-1) @ v[b, :, keep])[:, 0])
        rows.append(torch.stack(per_batch))
    return torch.stack(rows, dim=2)


def band_package_mask(
    q, k, v, window, causal=False, key_padding=None, dropout_p: float = 0.0
) -> Tensor:
    """The package's band_mask and attention; an extra dropout_p argument."""
    T = q.size(2)
    mask = band_mask(T, window, causal, device=q.device)  # (T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask, dropout_p)
    return out


def band_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention; rows without a key opened up, then zeroed."""
    T = q.shape[-2]
    mask = band_mask(T, window, causal).expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    empty = ~mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty)
    return out.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "strict_inequality",
        band_strict,
        "mistake",
        "I kept the keys with |t - s| < window, one frame short on each side.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "A loop over the frames with keys range(t - w, t + w), so the frame t + w is left out.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For the causal band I used triu(0).tril(window), which keeps the w frames after t.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I called band_mask(T, window) and never passed causal.",
    ),
    BlindCase(
        CHECK,
        "no_lower_limit",
        band_no_lower_limit,
        "mistake",
        "My band is ones.tril(window) (tril(0) when causal), with no triu, so every earlier "
        "frame is seen.",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        band_always_causal,
        "mistake",
        "I always build the causal band, whatever the causal argument says.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_keys",
        band_zero_padded_keys,
        "mistake",
        "I padded w zero frames at both ends and unfolded 2w + 1 keys per frame, so the frames "
        "at the ends attend to zero keys.",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I gathered keys at t + r with the indices clamped to 0 .. T - 1, so the end frames "
        "see their nearest frame several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I shifted the keys with torch.roll for each offset, so the band wraps around the ends.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I applied key_padding as (B, 1, T, 1), over the queries.",
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
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I only applied the band and forgot key_padding.",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        band_nan_rows,
        "mistake",
        "masked_fill with -inf and softmax; a frame that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I forgot the 1 / sqrt(Dh) scale.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9; a frame without a key averages all the values.",
    ),
    BlindCase(
        CHECK,
        "returns_weights_too",
        band_returns_weights,
        "mistake",
        "I returned what attention returns, (out, weights).",
    ),
    BlindCase(
        CHECK,
        "scale_by_keys_seen",
        band_scale_by_window,
        "mistake",
        "I scaled by 1 / sqrt(2w + 1), the number of keys a frame sees, instead of sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "full_arange",
        band_full_arange,
        "correct",
        "Full attention with a band built from arange and an explicit guard for empty rows.",
    ),
    BlindCase(
        CHECK,
        "frame_loop",
        band_frame_loop,
        "correct",
        "A loop over frames and sentences on each frame's own slice of keys, padding removed.",
    ),
    BlindCase(
        CHECK,
        "package_band_mask",
        band_package_mask,
        "correct",
        "The package's band_mask and attention; an extra dropout_p argument defaulting to 0.",
    ),
    BlindCase(
        CHECK,
        "sdpa",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with the band mask; rows without a key opened up and "
        "then set to zero.",
    ),
]
