"""Blind set B21, check_banded_attention (chapter 20): local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _softmax_zero_rows(scores: Tensor, allowed: Tensor) -> Tensor:
    """A masked softmax whose rows without a key are zero (and whose gradient is finite)."""
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _full(q, k, v, allowed: Tensor, scale: float | None = None) -> Tensor:
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    return _softmax_zero_rows(scores, allowed) @ v


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window  # < for <=
    if causal:
        band = band & (d >= 0)
    return _full(q, k, v, band & _padding(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # "window frames on each side plus the frame itself"
    if causal:
        band = band & (d >= 0)
    return _full(q, k, v, band & _padding(key_padding))


def band_range_end_excluded(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype, device=v.device)
    for t in range(T):
        lo = max(0, t - window)
        hi = t + 1 if causal else min(T, t + window)  # the end of range() is left out
        kk, vv = k[:, :, lo:hi], v[:, :, lo:hi]
        scores = q[:, :, t : t + 1] @ kk.transpose(-2, -1) / math.sqrt(q.shape[-1])
        allowed = torch.ones_like(scores, dtype=torch.bool)
        if key_padding is not None:
            allowed = allowed & key_padding[:, None, None, lo:hi]
        out[:, :, t : t + 1] = _softmax_zero_rows(scores, allowed) @ vv
    return out


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # one-sided whatever causal says
    return _full(q, k, v, band & _padding(key_padding))


def band_ignores_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window  # causal never used
    return _full(q, k, v, band & _padding(key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    band = torch.ones(q.shape[2], q.shape[2], dtype=torch.bool, device=q.device)
    band = band.tril(window).triu(-window)
    if causal:
        band = band.triu()  # triu where tril was meant: s >= t
    return _full(q, k, v, band & _padding(key_padding))


def band_zero_padded_ends(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))  # zeros at both ends, counted as keys
    vp = F.pad(v, (0, 0, w, w))
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    realp = F.pad(real, (w, w), value=True)
    out = []
    for t in range(T):
        idx = torch.arange(t, t + 2 * w + 1, device=q.device)  # padded positions t-w .. t+w
        if causal:
            idx = idx[: w + 1]
        scores = q[:, :, t : t + 1] @ kp[:, :, idx].transpose(-2, -1) / math.sqrt(Dh)
        allowed = realp[:, idx][:, None, None, :].expand_as(scores)
        out.append(_softmax_zero_rows(scores, allowed) @ vp[:, :, idx])
    return torch.cat(out, dim=2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    offsets = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offsets).clamp(0, T - 1)  # (T, n)
    kk, vv = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = (q[:, :, :, None, :] * kk).sum(-1) / math.sqrt(Dh)  # (B, H, T, n)
    allowed = real[:, idx][:, None]  # (B, 1, T, n)
    weights = _softmax_zero_rows(scores, allowed.expand_as(scores))
    return (weights[..., None] * vv).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # circular distance
    dist = torch.minimum(d, T - d) if not causal else d
    band = dist <= window
    return _full(q, k, v, band & _padding(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    return _full(q, k, v, band)  # key_padding accepted, never used


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True = padding, I thought
    return _full(q, k, v, band)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]  # the query axis
    return _full(q, k, v, band)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    band = band & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~band, float("-inf")).softmax(-1)  # a row with no key: NaN
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    return _full(q, k, v, band & _padding(key_padding), scale=1.0)


# ---------------------------------------------------------------- correct variants


def band_tril_triu(q, k, v, window, causal=False, key_padding=None):
    """tril/triu of a ones matrix, einsum for both products."""
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window) & ones.triu(-window)
    if key_padding is not None:
        band = band & key_padding.unsqueeze(1).unsqueeze(2)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / q.shape[-1] ** 0.5
    weights = _softmax_zero_rows(scores, band.expand_as(scores))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_loop_slices(q, k, v, window, causal=False, key_padding=None):
    """A loop over frames with slices lo:hi (hi = t + window + 1), written with torch.where."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        s = (q[:, :, t, None] @ k[:, :, lo:hi].transpose(-2, -1)).squeeze(-2) / math.sqrt(Dh)
        real = (
            torch.ones(B, hi - lo, dtype=torch.bool, device=q.device)
            if key_padding is None
            else key_padding[:, lo:hi]
        )[:, None, :]
        w = _softmax_zero_rows(s, real.expand_as(s))
        outs.append(torch.einsum("bhs,bhsd->bhd", w, v[:, :, lo:hi]))
    return torch.stack(outs, dim=2)


def band_where_guard(q, k, v, window, causal=False, key_padding=None):
    """scores filled with -inf by torch.where; empty rows zeroed by a finite-guarded softmax."""
    T = q.shape[2]
    pos = torch.arange(T, device=q.device)
    diff = pos.view(T, 1) - pos.view(1, T)
    allowed = (diff <= window) & (diff >= (0 if causal else -window))
    if key_padding is not None:
        allowed = allowed[None, None] & key_padding[:, None, None, :]
    allowed = allowed.expand(q.shape[0], q.shape[1], T, T)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    empty = ~allowed.any(-1, keepdim=True)
    scores = torch.where(empty, torch.zeros_like(scores), scores)
    weights = torch.softmax(scores, -1) * (~empty)
    return torch.matmul(weights, v)


CASES = [
    BlindCase(CHECK, "too_narrow", band_too_narrow, "mistake", "|t - s| < window instead of <="),
    BlindCase(CHECK, "too_wide", band_too_wide, "mistake", "|t - s| <= window + 1"),
    BlindCase(
        CHECK,
        "range_end_excluded",
        band_range_end_excluded,
        "mistake",
        "a loop with k[lo:t + window]: the end of the slice is left out, one frame short",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        band_always_causal,
        "mistake",
        "a one-sided band 0 <= t - s <= window even when causal is False",
    ),
    BlindCase(
        CHECK,
        "ignores_causal",
        band_ignores_causal,
        "mistake",
        "never used the causal flag: always two-sided",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "for causal I took triu of the band, so frames look ahead",
    ),
    BlindCase(
        CHECK,
        "zero_padded_ends",
        band_zero_padded_ends,
        "mistake",
        "padded k and v with zeros at the ends and let every frame see 2w + 1 keys",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "gathered keys at t + offset clamped to 0 .. T - 1: edge frames repeat",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "circular distance: the band wraps around the ends",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "key_padding accepted but never applied",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "used ~key_padding, thinking True = padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: applied along the queries",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        band_nan_rows,
        "mistake",
        "plain softmax after -inf fill: a frame with no key gets NaN",
    ),
    BlindCase(CHECK, "no_scale", band_no_scale, "mistake", "forgot the 1 / sqrt(Dh)"),
    BlindCase(
        CHECK,
        "tril_triu_einsum",
        band_tril_triu,
        "correct",
        "the band from tril/triu of a ones matrix, einsum products",
    ),
    BlindCase(
        CHECK,
        "loop_slices",
        band_loop_slices,
        "correct",
        "a loop over frames, each attending to k[lo:hi] with hi = t + window + 1",
    ),
    BlindCase(
        CHECK,
        "where_guard",
        band_where_guard,
        "correct",
        "torch.where for the -inf fill and the empty-row guard",
    ),
]
