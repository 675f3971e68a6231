"""Blind set B23, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _safe_softmax_attend(scores: Tensor, allowed: Tensor, v: Tensor) -> Tensor:
    """Softmax over the allowed keys; a row with none gets zero weights (no NaN)."""
    scores = scores.masked_fill(~allowed, float("-inf"))
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _full(q, k, v, allowed_tt: Tensor, key_padding, scale=None) -> Tensor:
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    allowed = allowed_tt
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    return _safe_softmax_attend(scores, allowed.expand_as(scores), v)


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() < window  # '<' where the band is |t - s| <= window
    if causal:
        allowed &= d >= 0
    return _full(q, k, v, allowed, key_padding)


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window + 1  # one frame too many on each side
    if causal:
        allowed &= d >= 0
    return _full(q, k, v, allowed, key_padding)


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    allowed = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t if causal else t + window  # range's end is excluded: one frame short on the right
        for s in range(max(0, t - window), min(T, hi)):
            allowed[t, s] = True
        if causal:
            allowed[t, t] = True
    return _full(q, k, v, allowed, key_padding)


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril().triu(-window)  # one-sided
    return _full(q, k, v, allowed, key_padding)


def band_never_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window  # I never read the causal flag
    return _full(q, k, v, allowed, key_padding)


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0  # s >= t: the future instead of the past
    return _full(q, k, v, allowed, key_padding)


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    width = w + 1 if causal else 2 * w + 1
    right = 0 if causal else w
    kp = F.pad(k, (0, 0, w, right))  # zeros before and after the sequence
    vp = F.pad(v, (0, 0, w, right))
    kw = kp.unfold(2, width, 1)  # (B, H, T, Dh, width)
    vw = vp.unfold(2, width, 1)  # (B, H, T, Dv, width)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, kw) / math.sqrt(Dh)
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    real_w = F.pad(real, (w, right), value=True).unfold(1, width, 1)  # the pad counted as real
    allowed = real_w[:, None]  # (B, 1, T, width)
    out = _safe_softmax_attend(scores.unsqueeze(-2), allowed.unsqueeze(-2), vw.transpose(-2, -1))
    return out.squeeze(-2)


def band_indices_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offsets = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offsets).clamp(0, T - 1)  # (T, width)
    kw, vw = k[:, :, idx], v[:, :, idx]  # (B, H, T, width, D): the ends repeat frame 0 / T-1
    scores = (q.unsqueeze(-2) * kw).sum(-1) / math.sqrt(Dh)
    allowed = torch.ones_like(scores, dtype=torch.bool)
    if key_padding is not None:
        allowed = key_padding[:, idx][:, None].expand_as(scores)
    return _safe_softmax_attend(scores.unsqueeze(-2), allowed.unsqueeze(-2), vw).squeeze(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offsets = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offsets) % T  # wraps to the other end
    allowed_tt = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    allowed_tt[torch.arange(T, device=q.device)[:, None], idx] = True
    return _full(q, k, v, allowed_tt, key_padding)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    return _full(q, k, v, allowed, None)  # key_padding never used


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    pad = None if key_padding is None else ~key_padding  # True = padding, I thought
    return _full(q, k, v, allowed, pad)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = allowed.expand_as(scores)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]  # (B, 1, T, 1): the queries' axis
    return _safe_softmax_attend(scores, mask, v)


def band_nan_for_empty_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)  # NaN where nothing seen
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    return _full(q, k, v, allowed, key_padding, scale=1.0)  # forgot 1 / sqrt(Dh)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d >= 0
    return _full(q, k, v, allowed, key_padding, scale=v.shape[-1] ** -0.5)  # Dv, not Dh


# ---------------------------------------------------------------- correct variants


def band_tril_triu_mask(q, k, v, window, causal=False, key_padding=None):
    """Full attention under a tril/triu band mask, -inf fill and a guard for empty rows."""
    B, H, T, Dh = q.shape
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.matmul(q, k.transpose(-1, -2)) / Dh**0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    empty = torch.isinf(scores).all(-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(empty, 0.0), dim=-1)
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    return weights @ v


def band_loop_over_frames(q, k, v, window, causal=False, key_padding=None):
    """One frame at a time: slice its window of keys, drop padding, attend."""
    B, H, T, Dh = q.shape
    if T == 0:
        return v.new_zeros(B, H, 0, v.shape[-1])
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        ks, vs = k[:, :, lo:hi], v[:, :, lo:hi]  # (B, H, n, D)
        scores = torch.einsum("bhd,bhnd->bhn", q[:, :, t], ks) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, lo:hi][:, None, :].expand_as(scores)
        else:
            real = torch.ones_like(scores, dtype=torch.bool)
        seen = real.any(-1, keepdim=True)
        w = scores.masked_fill(~real, float("-inf")).masked_fill(~seen, 0.0).softmax(-1)
        w = w * seen
        outs.append(torch.einsum("bhn,bhnd->bhd", w, vs))
    return torch.stack(outs, dim=2)


def band_additive_bias(q, k, v, window, causal=False, key_padding=None):
    """The band as an additive -inf bias built from |t - s|; empty rows zeroed with where."""
    T = q.shape[2]
    pos = torch.arange(T, device=q.device)
    diff = pos.view(-1, 1) - pos.view(1, -1)  # t - s
    ok = (diff <= window) & (diff >= (0 if causal else -window))
    ok = ok.view(1, 1, T, T)
    if key_padding is not None:
        ok = ok & key_padding.view(-1, 1, 1, T)
    bias = torch.zeros(ok.shape, dtype=q.dtype, device=q.device).masked_fill(~ok, float("-inf"))
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1) + bias
    any_key = ok.any(-1, keepdim=True)
    weights = torch.where(any_key, scores, torch.zeros_like(scores)).softmax(-1)
    weights = torch.where(any_key, weights, torch.zeros_like(weights))
    return weights @ v


CASES = [
    BlindCase(
        CHECK,
        "band_one_too_narrow",
        band_too_narrow,
        "mistake",
        "|t - s| < window instead of <= window",
    ),
    BlindCase(
        CHECK,
        "band_one_too_wide",
        band_too_wide,
        "mistake",
        "|t - s| <= window + 1: one frame too many on each side",
    ),
    BlindCase(
        CHECK,
        "range_end_excluded",
        band_range_end_left_out,
        "mistake",
        "range(t - window, t + window) in a loop: the frame t + window is left out",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "tril().triu(-window) whatever causal says: a one-sided band when two-sided is asked",
    ),
    BlindCase(
        CHECK,
        "causal_flag_ignored",
        band_never_causal,
        "mistake",
        "I built the two-sided band and never read the causal flag",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "causal: I kept s >= t (t - s <= 0) instead of s <= t",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted_as_keys",
        band_zero_padded_keys,
        "mistake",
        "F.pad with zeros and unfold windows; the padded zero keys are attended to at the ends",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_indices_clamped,
        "mistake",
        "window indices clamped to [0, T - 1]: the end frames are counted several times",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "window indices taken modulo T, so the band wraps to the other end",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I never used key_padding",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, as if True meant padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: I masked the padded queries' rows, not the keys",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_keys",
        band_nan_for_empty_rows,
        "mistake",
        "plain softmax after the -inf fill: a frame that sees no key gets NaN",
    ),
    BlindCase(
        CHECK,
        "no_scale",
        band_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh)",
    ),
    BlindCase(
        CHECK,
        "scaled_by_dv",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt(v.shape[-1]) instead of the queries' Dh",
    ),
    BlindCase(
        CHECK,
        "tril_triu_full_mask",
        band_tril_triu_mask,
        "correct",
        "full attention under tril/triu band & padding, empty rows zeroed with where",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_loop_over_frames,
        "correct",
        "a Python loop over frames, slicing each frame's window of keys",
    ),
    BlindCase(
        CHECK,
        "additive_bias",
        band_additive_bias,
        "correct",
        "an additive -inf bias from the offsets t - s, q scaled before the product",
    ),
]
