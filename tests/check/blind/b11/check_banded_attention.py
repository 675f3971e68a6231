"""Blind set B11, check_banded_attention (chapter 20): local (banded) attention as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: bool = True) -> Tensor:
    """A right masked attention, shared by the mistakes that are in the mask."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    any_key = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~any_key, 0.0).softmax(-1) * any_key
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    idx = torch.arange(T, device=device)
    return idx[None, :] - idx[:, None]  # (T, T): s - t


def _padding(allowed: Tensor, key_padding: Tensor | None) -> Tensor:
    if key_padding is None:
        return allowed
    return allowed & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() < window  # strictly inside the window
    if causal:
        allowed &= d <= 0
    return _attend(q, k, v, _padding(allowed, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window + 1  # window frames on each side, plus the frame itself
    if causal:
        allowed &= d <= 0
    return _attend(q, k, v, _padding(allowed, key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        end = t if causal else t + window
        for s in range(max(0, t - window), min(T, end)):  # range leaves out its end
            allowed[t, s] = True
    return _attend(q, k, v, _padding(allowed, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = (d <= 0) & (d >= -window)  # the past window frames and itself
    return _attend(q, k, v, _padding(allowed, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    return _attend(q, k, v, _padding(d.abs() <= window, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    if causal:
        allowed = allowed.triu()  # keep s <= t ... I took the upper triangle
    return _attend(q, k, v, _padding(allowed, key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    return _attend(q, k, v, allowed)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    if key_padding is not None:
        allowed = allowed & ~key_padding[:, None, None, :]  # True = a padding frame
    return _attend(q, k, v, allowed)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, :, None]
    return _attend(q, k, v, allowed)


def band_nan_without_keys(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    d = _offsets(T, q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    allowed = _padding(allowed, key_padding)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
    return weights @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    allowed = _padding(allowed, key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~allowed, -1e9).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    allowed = d.abs() <= window
    if causal:
        allowed &= d <= 0
    return _attend(q, k, v, _padding(allowed, key_padding), scale=False)


def _windows(x: Tensor, window: int, mode: str) -> Tensor:
    """(B, H, T, D) -> (B, H, T, 2w+1, D): the frames t-w .. t+w of every t."""
    T = x.shape[-2]
    idx = torch.arange(T, device=x.device)[:, None] + torch.arange(-window, window + 1)[None]
    if mode == "clamp":
        idx = idx.clamp(0, T - 1)
    else:  # "wrap"
        idx = idx % T
    return x[..., idx, :]


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    kw, vw = _windows(k, window, "clamp"), _windows(v, window, "clamp")  # (B, H, T, W, D)
    offs = torch.arange(-window, window + 1, device=q.device)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kw) / math.sqrt(q.shape[-1])
    ok = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        ok &= offs <= 0
    if key_padding is not None:
        idx = (torch.arange(q.shape[-2])[:, None] + offs).clamp(0, q.shape[-2] - 1)
        ok &= key_padding[:, None, idx]
    any_key = ok.any(-1, keepdim=True)
    w = scores.masked_fill(~ok, float("-inf")).masked_fill(~any_key, 0).softmax(-1) * any_key
    return torch.einsum("bhtw,bhtwd->bhtd", w, vw)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    kw, vw = _windows(k, window, "wrap"), _windows(v, window, "wrap")
    offs = torch.arange(-window, window + 1, device=q.device)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kw) / math.sqrt(q.shape[-1])
    ok = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        ok &= offs <= 0
    if key_padding is not None:
        ok &= key_padding[:, None, (torch.arange(T)[:, None] + offs) % T]
    any_key = ok.any(-1, keepdim=True)
    w = scores.masked_fill(~ok, float("-inf")).masked_fill(~any_key, 0).softmax(-1) * any_key
    return torch.einsum("bhtw,bhtwd->bhtd", w, vw)


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    kp = F.pad(k, (0, 0, window, window))  # zeros before and after the sequence
    vp = F.pad(v, (0, 0, window, window))
    kw = kp.unfold(-2, 2 * window + 1, 1).transpose(-1, -2)  # (B, H, T, 2w+1, D)
    vw = vp.unfold(-2, 2 * window + 1, 1).transpose(-1, -2)
    offs = torch.arange(-window, window + 1, device=q.device)
    scores = torch.einsum("bhtd,bhtwd->bhtw", q, kw) / math.sqrt(q.shape[-1])
    ok = torch.ones_like(scores, dtype=torch.bool)
    if causal:
        ok &= offs <= 0
    if key_padding is not None:
        kpad = F.pad(key_padding, (window, window), value=True)  # the added frames: "real"
        ok &= kpad.unfold(-1, 2 * window + 1, 1)[:, None]
    any_key = ok.any(-1, keepdim=True)
    w = scores.masked_fill(~ok, float("-inf")).masked_fill(~any_key, 0).softmax(-1) * any_key
    del T
    return torch.einsum("bhtw,bhtwd->bhtd", w, vw)


# ---------------------------------------------------------------- correct variants


def band_full_mask_where(q, k, v, window, causal=False, key_padding=None):
    """Full attention under the band mask built from |t - s|; torch.where, and the empty rows
    zeroed after the softmax."""
    T = q.size(-2)
    t = torch.arange(T, device=q.device)
    allowed = (t[:, None] - t[None, :]).abs() <= window
    if causal:
        allowed = allowed & (t[None, :] <= t[:, None])
    allowed = allowed.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        allowed = allowed & key_padding.view(q.shape[0], 1, 1, T)
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    empty = ~allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(torch.where(empty, torch.zeros_like(scores), scores), dim=-1)
    weights = torch.where(empty, torch.zeros_like(weights), weights)
    return torch.matmul(weights, v)


def band_unfold_windows(q, k, v, window, causal=False, key_padding=None):
    """Each frame's 2w+1 neighbours gathered with F.pad + unfold; the frames added at the ends
    and the padding masked out: O(T w) scores."""
    B, H, T, Dh = q.shape
    W = 2 * window + 1
    kw = F.pad(k, (0, 0, window, window)).unfold(2, W, 1).transpose(-1, -2)  # (B,H,T,W,Dh)
    vw = F.pad(v, (0, 0, window, window)).unfold(2, W, 1).transpose(-1, -2)
    real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    if key_padding is not None:
        real = key_padding
    real = F.pad(real, (window, window), value=False).unfold(1, W, 1)  # (B, T, W)
    ok = real[:, None]  # (B, 1, T, W)
    if causal:
        ok = ok & (torch.arange(W, device=q.device) <= window)
    scores = (q.unsqueeze(-2) * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, W)
    scores = scores.masked_fill(~ok, float("-inf"))
    has = ok.any(-1, keepdim=True)
    weights = scores.masked_fill(~has, 0.0).softmax(-1).masked_fill(~has, 0.0)
    return (weights.unsqueeze(-1) * vw).sum(-2)


def band_python_loop(q, k, v, window, causal=False, key_padding=None, scale=None):
    """A loop over the frames, each attending to its slice of keys; an optional scale."""
    B, H, T, _ = q.shape
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        s = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-1, -2)) * scale  # (B, H, 1, n)
        if key_padding is not None:
            s = s.masked_fill(~key_padding[:, None, None, lo:hi], float("-inf"))
        seen = torch.isfinite(s).any(-1, keepdim=True)
        w = torch.softmax(s.masked_fill(~seen, 0.0), dim=-1) * seen
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I used |t - s| < window, one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I used |t - s| <= window + 1, counting the frame itself as one of the window.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "A Python loop with range(t - window, t + window): the last frame on the right (and, "
        "when causal, the frame itself) is left out.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I built only the past side of the band, also when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never read causal: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I took .triu() of the band, which keeps s >= t: the frame sees the future.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I never applied key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I treated key_padding as True = padding and masked the real frames.",
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
        "nan_without_keys",
        band_nan_without_keys,
        "mistake",
        "Plain softmax after the -inf fill: a frame with no visible key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled with -1e9, so a frame with no visible key averages all the values instead of "
        "getting zeros.",
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
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I gathered each frame's 2w+1 neighbours with indices clamped to [0, T-1], so at the "
        "ends the first and last frames are counted several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "Neighbour indices taken modulo T, so the band wraps around the ends of the sequence.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_padded_keys,
        "mistake",
        "F.pad with zeros and unfold for the windows, but the zero frames added at the ends are "
        "scored as keys.",
    ),
    BlindCase(
        CHECK,
        "full_mask_where",
        band_full_mask_where,
        "correct",
        "The band from |t - s| <= window on full scores, torch.where, empty rows zeroed.",
    ),
    BlindCase(
        CHECK,
        "unfold_windows",
        band_unfold_windows,
        "correct",
        "Windows of 2w+1 keys by F.pad + unfold, the added frames and the padding masked out.",
    ),
    BlindCase(
        CHECK,
        "python_loop",
        band_python_loop,
        "correct",
        "A loop over the frames, each on its own slice of keys; an optional scale argument.",
    ),
]
