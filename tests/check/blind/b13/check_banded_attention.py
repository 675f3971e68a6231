"""Blind set B13, check_banded_attention (chapter 20): banded local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Masked attention with zero output for a query without keys (shared helper)."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1) * scale).masked_fill(~mask, float("-inf"))
    has = mask.any(-1, keepdim=True)
    w = scores.masked_fill(~has, 0.0).softmax(-1).masked_fill(~has, 0.0)
    return w @ v


def _offsets(T: int, device) -> Tensor:
    idx = torch.arange(T, device=device)
    return idx[:, None] - idx[None, :]  # (T, T): t - s


def _pad(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        hi = t if causal else t + window
        band[t, max(0, t - window) : hi] = True  # range(t - w, t + w): the end is left out
    return _attend(q, k, v, band & _pad(key_padding))


def band_always_one_sided(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the past window only
    return _attend(q, k, v, band & _pad(key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[2], q.device).abs() <= window
    return _attend(q, k, v, band & _pad(key_padding))


def band_causal_wrong_axis(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & torch.ones_like(band).triu()  # triu: looks at the future
    return _attend(q, k, v, band & _pad(key_padding))


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    """Gathers the 2w+1 neighbours from a zero-padded copy, padding ignored at the ends."""
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))
    vp = F.pad(v, (0, 0, w, w))
    idx = torch.arange(T, device=q.device)[:, None] + torch.arange(2 * w + 1, device=q.device)
    kw, vw = kp[:, :, idx], vp[:, :, idx]  # (B, H, T, 2w+1, D)
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    rel = torch.arange(-w, w + 1, device=q.device)
    allowed = (rel <= 0) if causal else torch.ones_like(rel, dtype=torch.bool)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True)[:, idx]  # (B, T, 2w+1)
        allowed = allowed & real[:, None]
    scores = scores.masked_fill(~allowed, float("-inf"))
    return (scores.softmax(-1)[..., None] * vw).sum(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    idx = torch.arange(T, device=q.device)[:, None] + torch.arange(-w, w + 1, device=q.device)
    idx = idx.clamp(0, T - 1)  # stay inside the sequence
    kw, vw = k[:, :, idx], v[:, :, idx]
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    rel = torch.arange(-w, w + 1, device=q.device)
    allowed = (rel <= 0) if causal else torch.ones_like(rel, dtype=torch.bool)
    if key_padding is not None:
        allowed = allowed & key_padding[:, idx][:, None]
    scores = scores.masked_fill(~allowed, float("-inf"))
    has = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~has, 0.0).softmax(-1).masked_fill(~has, 0.0)
    return (weights[..., None] * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # circular distance
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band = band & (_offsets(T, q.device) >= 0)
    return _attend(q, k, v, band & _pad(key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    pad = True if key_padding is None else ~key_padding[:, None, None, :]  # True = padding
    return _attend(q, k, v, band & pad)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    pad = True if key_padding is None else key_padding[:, None, :, None]
    return _attend(q, k, v, band & pad)


def band_nan_without_keys(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~(band & _pad(key_padding)), float("-inf"))
    return scores.softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _pad(key_padding), scale=1.0)


# ---------------------------------------------------------------- correct variants


def band_tril_triu(q, k, v, window, causal=False, key_padding=None):
    """The band from tril/triu, -1e9 fill and an explicit zeroing of rows without keys."""
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window) & ones.triu(-window)
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) / q.shape[-1] ** 0.5
    weights = torch.where(mask, scores, torch.full_like(scores, -1e9)).softmax(-1)
    weights = weights * mask  # zero for masked keys, and for rows that see none
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_per_frame_loop(q, k, v, window, causal=False, key_padding=None):
    """A loop over frames, each attending to its slice of keys."""
    B, H, T, Dh = q.shape
    out = q.new_zeros(B, H, T, v.shape[-1])
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window)) + 1
        s = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi]
            s = s.masked_fill(~real, float("-inf"))
            any_real = real.any(-1, keepdim=True)
            w = s.masked_fill(~any_real, 0.0).softmax(-1).masked_fill(~any_real, 0.0)
        else:
            w = s.softmax(-1)
        outs.append(w @ v[:, :, lo:hi])
    out = torch.cat(outs, dim=2) if outs else out
    return out


def band_sdpa_blocked_extra_args(
    q, k, v, window, causal=False, key_padding=None, block_size=None, dropout_p=0.0
):
    """Full attention with a logsumexp softmax; unused blocked-version arguments with defaults."""
    T = q.shape[2]
    idx = torch.arange(T, device=q.device)
    rel = idx[None, :] - idx[:, None]  # s - t
    band = (rel >= -window) & (rel <= (0 if causal else window))
    mask = band.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding.view(-1, 1, 1, T)
    scores = (q / math.sqrt(q.shape[-1])) @ k.mT
    scores = scores.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)
    weights = torch.exp(scores - torch.where(torch.isinf(lse), torch.zeros_like(lse), lse))
    return weights @ v


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window, one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I let each frame see window + 1 neighbours on each side.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "My slice t - w : t + w leaves out the last frame (and t itself when causal).",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_one_sided,
        "mistake",
        "I built only the past side of the band, even when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I forgot to use causal: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_wrong_axis",
        band_causal_wrong_axis,
        "mistake",
        "For causal I used triu instead of tril, so frames look ahead.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_as_keys",
        band_zero_padded_keys,
        "mistake",
        "I gathered the 2w+1 neighbours from a zero-padded k, so the ends get zero keys.",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I clamped neighbour indices to 0..T-1, so edge frames count the end frames twice.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance circularly, so the band wraps from the end to the start.",
    ),
    BlindCase(
        CHECK, "padding_ignored", band_padding_ignored, "mistake", "I never used key_padding."
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I took key_padding as True = padding and kept only the padding frames.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I applied key_padding along the query axis instead of the key axis.",
    ),
    BlindCase(
        CHECK,
        "nan_without_keys",
        band_nan_without_keys,
        "mistake",
        "Plain softmax after -inf fill: a frame that sees no key gets NaN.",
    ),
    BlindCase(
        CHECK, "no_scale", band_no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)."
    ),
    BlindCase(
        CHECK,
        "tril_triu_einsum",
        band_tril_triu,
        "correct",
        "Band from tril/triu, einsum scores, -1e9 fill, then weights multiplied by the mask.",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        band_per_frame_loop,
        "correct",
        "A Python loop over frames, each attending to its slice of keys.",
    ),
    BlindCase(
        CHECK,
        "logsumexp_extra_args",
        band_sdpa_blocked_extra_args,
        "correct",
        "Softmax via logsumexp on a full band mask; block_size and dropout_p unused.",
    ),
]
