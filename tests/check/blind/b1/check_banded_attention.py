"""Blind cases for check_banded_attention (chapter 20)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T, device=None):
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # (T, T): t - s


def _full(q, k, v, allowed, key_padding, scale=None):
    mask = allowed
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask, scale=scale)
    return out


def ba_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() < window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding)


def ba_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() <= window + 1) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding)


def ba_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        hi = t if causal else t + window  # range end excluded: frame t + window (or t) is missed
        for s in range(max(0, t - window), min(T, hi)):
            allowed[t, s] = True
    return _full(q, k, v, allowed, key_padding)


def ba_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    allowed = _offsets(q.shape[-2]).abs() <= window  # always two-sided
    return _full(q, k, v, allowed, key_padding)


def ba_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d >= 0) & (d <= window)  # one-sided even when causal is False
    return _full(q, k, v, allowed, key_padding)


def ba_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = d.abs() <= window
    if causal:
        allowed = allowed & (d <= 0)  # s >= t: the future instead of the past
    return _full(q, k, v, allowed, key_padding)


def ba_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    T, Dh = q.shape[-2], q.shape[-1]
    offsets = torch.arange(-window, 1 if causal else window + 1)
    idx = (torch.arange(T)[:, None] + offsets[None, :]).clamp(
        0, T - 1
    )  # (T, W): ends repeat frames
    kw, vw = k[..., idx, :], v[..., idx, :]  # (B, H, T, W, D)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kw) / math.sqrt(Dh)
    if key_padding is not None:
        real = key_padding[:, idx][:, None]  # (B, 1, T, W)
        scores = scores.masked_fill(~real, float("-inf"))
        has = real.any(-1, keepdim=True)
        w = torch.softmax(scores.masked_fill(~has, 0.0), -1) * has
    else:
        w = torch.softmax(scores, -1)
    return torch.einsum("bhtw,bhtwd->bhtd", w, vw)


def ba_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    T, Dh = q.shape[-2], q.shape[-1]
    right = 0 if causal else window
    kp = F.pad(k, (0, 0, window, right))  # zero frames beyond both ends, counted as keys
    vp = F.pad(v, (0, 0, window, right))
    idx = torch.arange(T)[:, None] + torch.arange(window + right + 1)[None, :]
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kp[..., idx, :]) / math.sqrt(Dh)
    if key_padding is not None:
        real = F.pad(key_padding, (window, right), value=True)[:, idx][:, None]
        scores = scores.masked_fill(~real, float("-inf"))
    w = torch.softmax(scores, -1)
    return torch.einsum("bhtw,bhtwd->bhtd", w, vp[..., idx, :])


def ba_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T) % T  # distances taken around a circle
    d = torch.minimum(d, T - d) if not causal else d
    allowed = d <= window
    return _full(q, k, v, allowed, key_padding)


def ba_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, None)


def ba_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, None if key_padding is None else ~key_padding)


def ba_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]  # masks query rows instead of key columns
    return attention(q, k, v, mask)[0]


def ba_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)  # a frame with no key: NaN
    return w @ v


def ba_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding, scale=1.0)


def ba_renamed_padding_kwarg(q, k, v, window, causal=False, key_padding_mask=None):
    d = _offsets(q.shape[-2])
    allowed = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _full(q, k, v, allowed, key_padding_mask)


def ba_full_with_tril_triu(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(-window)
    band = band.tril(0 if causal else window)
    return _full(q, k, v, band, key_padding, scale)


def ba_per_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    out = q.new_zeros(B, H, T, v.shape[-1])
    rows = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        scores = torch.einsum("bhd,bhsd->bhs", q[:, :, t], k[:, :, lo:hi]) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, None, lo:hi].expand_as(scores)
            any_real = real.any(-1, keepdim=True)
            scores = scores.masked_fill(~real, float("-inf")).masked_fill(~any_real, 0.0)
            w = torch.softmax(scores, -1) * any_real
        else:
            w = torch.softmax(scores, -1)
        rows.append(torch.einsum("bhs,bhsd->bhd", w, v[:, :, lo:hi]))
    out = out + torch.stack(rows, dim=2)
    return out


def ba_sdpa(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    mask = (d >= -(0 if causal else window)) & (d <= window)  # d = t - s
    mask = mask.expand(q.shape[0], 1, -1, -1)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    seen = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~seen)
    return out.masked_fill(~seen, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        ba_too_narrow,
        "mistake",
        "uses |t - s| < window instead of <= window",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        ba_too_wide,
        "mistake",
        "uses |t - s| <= window + 1, one frame too wide on each side",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        ba_range_end_left_out,
        "mistake",
        "loops s over range(t - window, t + window), whose end leaves out frame t + window (and t itself when causal)",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        ba_causal_ignored,
        "mistake",
        "always builds the two-sided band, ignoring causal",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        ba_always_causal,
        "mistake",
        "always builds the one-sided (past only) band, even when causal is False",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        ba_causal_looks_ahead,
        "mistake",
        "for causal keeps s >= t, the future frames, instead of s <= t",
    ),
    BlindCase(
        CHECK,
        "indices_clamped_at_ends",
        ba_clamped_indices,
        "mistake",
        "gathers 2w+1 keys per frame with indices clamped to 0..T-1, so the end frames count a key several times",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted_as_keys",
        ba_zero_padded_keys,
        "mistake",
        "zero-pads k and v beyond the ends and attends to those zero frames as if they were keys",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        ba_wraps_around,
        "mistake",
        "measures the distance modulo T, so the band wraps around from the end to the start",
    ),
    BlindCase(CHECK, "padding_ignored", ba_padding_ignored, "mistake", "never applies key_padding"),
    BlindCase(
        CHECK,
        "padding_inverted",
        ba_padding_inverted,
        "mistake",
        "uses ~key_padding, reading True as padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        ba_padding_on_queries,
        "mistake",
        "broadcasts key_padding as (B, 1, T, 1), masking query rows instead of key columns",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_key",
        ba_nan_rows,
        "mistake",
        "fills -inf and takes a plain softmax, so a frame that sees no key gets NaN",
    ),
    BlindCase(CHECK, "no_scale", ba_no_scale, "mistake", "forgets the 1/sqrt(Dh) scale"),
    BlindCase(
        CHECK,
        "slip_key_padding_mask_kwarg",
        ba_renamed_padding_kwarg,
        "mistake",
        "names the keyword argument key_padding_mask instead of key_padding",
    ),
    BlindCase(
        CHECK,
        "full_attention_tril_triu",
        ba_full_with_tril_triu,
        "correct",
        "builds the band with triu/tril of ones and calls the package's attention, with an optional scale",
    ),
    BlindCase(
        CHECK,
        "per_frame_slices",
        ba_per_frame_loop,
        "correct",
        "loops over the frames and attends to the slice of keys in the window",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_guard",
        ba_sdpa,
        "correct",
        "uses F.scaled_dot_product_attention under the band mask, letting frames with no key see all and zeroing them",
    ),
]
