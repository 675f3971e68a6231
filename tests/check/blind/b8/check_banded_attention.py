"""Blind set B8, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Right masked attention, shared by the mistakes that are in the mask."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _padding(mask: Tensor, key_padding: Tensor | None) -> Tensor:
    if key_padding is None:
        return mask
    return mask & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)  # < for <=
    return _attend(q, k, v, _padding(band, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d <= 0)  # s >= t: the future instead of the past
    return _attend(q, k, v, _padding(band, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _attend(q, k, v, _padding(d.abs() <= window, key_padding))


def band_always_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the window only looks back
    return _attend(q, k, v, _padding(band, key_padding))


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]  # the padded frames' rows, not columns
    return _attend(q, k, v, mask)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, mask)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)  # NaN where no key
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    return _attend(q, k, v, mask, scale=1.0)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    return _attend(q, k, v, mask, scale=1.0 / math.sqrt(v.shape[-1]))  # the output's width


def band_gather_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs).clamp(0, T - 1)  # (T, W)
    k_w, v_w = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D): edge frames repeated
    scores = (q[:, :, :, None, :] * k_w).sum(-1) / math.sqrt(Dh)  # (B, H, T, W)
    if key_padding is not None:
        real = key_padding[:, idx][:, None]  # (B, 1, T, W)
        has_key = real.any(-1, keepdim=True)
        scores = scores.masked_fill(~real, float("-inf")).masked_fill(~has_key, 0.0)
        w = scores.softmax(-1).masked_fill(~has_key, 0.0)
    else:
        w = scores.softmax(-1)
    return (w[..., None] * v_w).sum(-2)


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    mask = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        end = t if causal else min(T, t + window)  # range end exclusive: one frame short
        mask[t, max(0, t - window) : end + 1 if causal else end] = True
    return _attend(q, k, v, _padding(mask, key_padding))


def band_window_zero_shortcut(q, k, v, window, causal=False, key_padding=None):
    if window == 0:
        return v.clone()  # each frame sees only itself: its own value
    d = _offsets(q.shape[2], q.device)
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    return _attend(q, k, v, mask)


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v  # no NaN, so I thought it was fine


# ---------------------------------------------------------------- correct variants


def band_full_mask_tril_triu(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(-window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # a frame without keys: all zero
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) / Dh**0.5
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi]
            scores = scores.masked_fill(~real, float("-inf"))
            any_real = real.any(-1, keepdim=True)
            w = scores.masked_fill(~any_real, 0.0).softmax(-1) * any_real
        else:
            w = scores.softmax(-1)
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def band_sdpa_safe_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    t = torch.arange(T, device=q.device)
    d = t[:, None] - t[None, :]
    mask = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    mask = mask.expand(q.shape[0], 1, T, T)
    has_key = mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    safe = mask | ~has_key  # give keyless rows every key, then zero them below
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=safe)
    return out * has_key


def _case(name: str, code, kind: str, what: str) -> BlindCase:
    return BlindCase(check=CHECK, name=name, code=code, kind=kind, what=what)


CASES = [
    _case(
        "strict_inequality",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <=, so the band is one frame too narrow on each "
        "side (and window 0 sees nothing).",
    ),
    _case(
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I kept t - s <= 0, i.e. s >= t: the frame sees the next window frames "
        "instead of the previous ones.",
    ),
    _case(
        "causal_flag_ignored",
        band_causal_ignored,
        "mistake",
        "causal is accepted but never used: the band is always two-sided.",
    ),
    _case(
        "always_one_sided",
        band_always_one_sided,
        "mistake",
        "I made the band 0 <= t - s <= window in every case, so the two-sided version never "
        "looks ahead.",
    ),
    _case(
        "padding_masks_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as [:, None, :, None], masking the padded frames' rows instead "
        "of the padded keys.",
    ),
    _case(
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "key_padding is accepted but never applied to the mask.",
    ),
    _case(
        "nan_for_keyless_frames",
        band_nan_rows,
        "mistake",
        "Plain masked_fill(-inf) and softmax: a frame whose window holds only padding gets NaN "
        "instead of zeros.",
    ),
    _case(
        "no_scaling",
        band_no_scale,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh).",
    ),
    _case(
        "scaled_by_value_width",
        band_scale_by_dv,
        "mistake",
        "I scaled by 1 / sqrt(v.shape[-1]), the value width, instead of the query/key width Dh "
        "(only wrong when Dv != Dh).",
    ),
    _case(
        "gather_with_clamped_indices",
        band_gather_clamped,
        "mistake",
        "Blocked version: I gathered each frame's 2w+1 neighbours with indices clamped to "
        "0..T-1, so the first and last frames see their edge frame several times.",
    ),
    _case(
        "range_end_exclusive",
        band_range_end_left_out,
        "mistake",
        "Building the mask row by row, the two-sided slice ends at t + window, which Python "
        "excludes: the band is short by one frame on the right.",
    ),
    _case(
        "window_zero_returns_values",
        band_window_zero_shortcut,
        "mistake",
        "For window 0 I return v directly (each frame sees itself); a padded frame should get "
        "zeros.",
    ),
    _case(
        "minus_1e9_fill",
        band_fill_minus_1e9,
        "mistake",
        "I filled with -1e9 instead of -inf; a frame with no visible key gets the mean of all "
        "values instead of zeros.",
    ),
    _case(
        "tril_triu_einsum_nan_to_num",
        band_full_mask_tril_triu,
        "correct",
        "Full attention under a tril/triu band mask with einsum, -inf fill, and nan_to_num for "
        "frames without keys.",
    ),
    _case(
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A Python loop over frames, each attending to its slice lo:hi of keys and values, "
        "keyless frames zeroed.",
    ),
    _case(
        "sdpa_with_safe_rows",
        band_sdpa_safe_rows,
        "correct",
        "F.scaled_dot_product_attention with a boolean mask in which keyless rows are opened, "
        "then multiplied by 0 for those rows.",
    ),
]
