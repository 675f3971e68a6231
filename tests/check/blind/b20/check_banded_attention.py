"""Blind set B20, check_banded_attention (chapter 20): local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention
from transformer_tutorial.local_attention import band_mask

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device) -> Tensor:
    pos = torch.arange(T, device=device)
    return pos[:, None] - pos[None, :]  # (T, T): t - s


def _safe_weights(scores: Tensor, mask: Tensor) -> Tensor:
    scores = scores.masked_fill(~mask, float("-inf"))
    has_key = mask.any(-1, keepdim=True)
    return scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)


def _safe_softmax_attend(scores: Tensor, mask: Tensor, v: Tensor) -> Tensor:
    return _safe_weights(scores, mask) @ v


def _full(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    band: Tensor,
    key_padding: Tensor | None,
    *,
    scale: bool = True,
    pad_on_queries: bool = False,
    invert_pad: bool = False,
) -> Tensor:
    """Full attention under ``band`` (T, T) and the padding; one switch per padding slip."""
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    mask = band
    if key_padding is not None:
        pad = ~key_padding if invert_pad else key_padding
        mask = mask & (pad[:, None, :, None] if pad_on_queries else pad[:, None, None, :])
    else:
        mask = mask.expand(q.shape[0], 1, *band.shape)
    return _safe_softmax_attend(scores, mask, v)


def _band(T: int, window: int, causal: bool, device) -> Tensor:
    d = _offsets(T, device)
    ok = d.abs() <= window
    if causal:
        ok &= d >= 0
    return ok


# ---------------------------------------------------------------- mistakes


def banded_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window  # < for <=
    if causal:
        band &= d >= 0
    return _full(q, k, v, band, key_padding)


def banded_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # counted the frame itself as one of the window
    if causal:
        band &= d >= 0
    return _full(q, k, v, band, key_padding)


def banded_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        stop = t + 1 if causal else t + window  # range(t - w, t + w) misses t + w
        for s in range(max(0, t - window), min(T, stop)):
            band[t, s] = True
    return _full(q, k, v, band, key_padding)


def banded_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # one-sided whatever causal says
    return _full(q, k, v, band, key_padding)


def banded_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window  # causal never looked at
    return _full(q, k, v, band, key_padding)


def banded_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band &= d <= 0  # s >= t: the future instead of the past
    return _full(q, k, v, band, key_padding)


def banded_zero_padding_counted(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    w = window
    kp = F.pad(k, (0, 0, w, w))  # zeros before and after the sequence
    vp = F.pad(v, (0, 0, w, w))
    kw = kp.unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w+1): keys t-w .. t+w
    vw = vp.unfold(2, 2 * w + 1, 1)
    scores = torch.einsum("bhtd,bhtdj->bhtj", q, kw) / math.sqrt(Dh)
    offs = torch.arange(-w, w + 1, device=q.device)  # s - t
    band = (offs <= 0) if causal else torch.ones_like(offs, dtype=torch.bool)
    mask = band.expand(B, 1, T, 2 * w + 1)
    if key_padding is not None:
        real = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # pads "real"
        mask = mask & real[:, None]
    return torch.einsum("bhtj,bhtdj->bhtd", _safe_weights(scores, mask), vw)


def banded_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offs = torch.arange(-window, 1 if causal else window + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + offs).clamp(0, T - 1)  # (T, J)
    kw = k[:, :, idx]  # (B, H, T, J, Dh): edge frames repeated
    vw = v[:, :, idx]
    scores = (q[:, :, :, None, :] * kw).sum(-1) / math.sqrt(Dh)
    mask = torch.ones(B, 1, T, idx.shape[1], dtype=torch.bool, device=q.device)
    if key_padding is not None:
        mask = key_padding[:, idx][:, None]
    return (_safe_weights(scores, mask)[..., None] * vw).sum(-2)


def banded_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    T_idx = torch.arange(T, device=q.device)
    offs = range(-window, 1 if causal else window + 1)
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for o in offs:
        band[T_idx, (T_idx + o) % T] = True  # modulo T: the ends wrap around
    return _full(q, k, v, band, key_padding)


def banded_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    return _full(q, k, v, _band(q.shape[2], window, causal, q.device), None)


def banded_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[2], window, causal, q.device)
    return _full(q, k, v, band, key_padding, invert_pad=True)  # True taken as padding


def banded_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[2], window, causal, q.device)
    return _full(q, k, v, band, key_padding, pad_on_queries=True)  # (B, 1, T, 1)


def banded_nan_rows(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    mask = _band(T, window, causal, q.device)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v  # no guard for a frame that sees nothing


def banded_no_scale(q, k, v, window, causal=False, key_padding=None):
    band = _band(q.shape[2], window, causal, q.device)
    return _full(q, k, v, band, key_padding, scale=False)


# ---------------------------------------------------------------- correct


def banded_offsets_mask(q, k, v, window, causal=False, key_padding=None):
    """Full attention under a mask made from the offsets t - s."""
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    return _full(q, k, v, band, key_padding)


def banded_package_attention(q, k, v, window, causal=False, key_padding=None):
    """The package's band_mask and attention."""
    mask = band_mask(q.shape[2], window, causal, device=q.device)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q, k, v, mask)[0]


def banded_query_loop(q, k, v, window, causal=False, key_padding=None):
    """One query frame at a time, over its slice of keys."""
    B, H, T, Dh = q.shape
    out = v.new_zeros(B, H, T, v.shape[-1])
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = torch.einsum("bhd,bhsd->bhs", q[:, :, t], k[:, :, lo:hi]) / math.sqrt(Dh)
        if key_padding is not None:
            real = key_padding[:, None, lo:hi].expand_as(scores)
        else:
            real = torch.ones_like(scores, dtype=torch.bool)
        scores = scores.masked_fill(~real, float("-inf"))
        any_key = real.any(-1, keepdim=True)
        w = scores.masked_fill(~any_key, 0.0).softmax(-1) * any_key
        out[:, :, t] = torch.einsum("bhs,bhsd->bhd", w, v[:, :, lo:hi])
    return out


def banded_sdpa(q, k, v, window, causal=False, key_padding=None):
    """F.scaled_dot_product_attention with the band; rows without a key see everything and
    are zeroed afterwards."""
    mask = band_mask(q.shape[2], window, causal, device=q.device)[None, None]
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    has_key = mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~has_key)
    return out * has_key


CASES = [
    BlindCase(CHECK, "too_narrow", banded_too_narrow, "mistake", "|t - s| < window"),
    BlindCase(CHECK, "too_wide", banded_too_wide, "mistake", "|t - s| <= window + 1"),
    BlindCase(
        CHECK,
        "range_end_left_out",
        banded_range_end_left_out,
        "mistake",
        "range(t - w, t + w): the frame t + w left out",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        banded_always_causal,
        "mistake",
        "only the past side of the band, whatever causal says",
    ),
    BlindCase(CHECK, "causal_ignored", banded_causal_ignored, "mistake", "causal never used"),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        banded_causal_looks_ahead,
        "mistake",
        "causal kept s >= t instead of s <= t",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted",
        banded_zero_padding_counted,
        "mistake",
        "padded k and v with w zero frames at each end and unfolded; the zeros count as keys",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        banded_clamped_indices,
        "mistake",
        "gathered keys t-w..t+w with indices clamped to 0..T-1",
    ),
    BlindCase(CHECK, "wraps_around", banded_wraps_around, "mistake", "band indices taken modulo T"),
    BlindCase(
        CHECK, "padding_ignored", banded_padding_ignored, "mistake", "key_padding never used"
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        banded_padding_inverted,
        "mistake",
        "treated True in key_padding as padding",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        banded_padding_on_queries,
        "mistake",
        "key_padding[:, None, :, None]: masked the padded queries' rows",
    ),
    BlindCase(
        CHECK,
        "nan_rows",
        banded_nan_rows,
        "mistake",
        "-inf fill and softmax, no guard for a frame with no key",
    ),
    BlindCase(CHECK, "no_scale", banded_no_scale, "mistake", "forgot 1 / sqrt(Dh)"),
    BlindCase(
        CHECK,
        "offsets_mask",
        banded_offsets_mask,
        "correct",
        "full attention under a mask built from t - s",
    ),
    BlindCase(
        CHECK,
        "package_attention",
        banded_package_attention,
        "correct",
        "the package's band_mask and attention",
    ),
    BlindCase(CHECK, "query_loop", banded_query_loop, "correct", "a loop over query frames"),
    BlindCase(
        CHECK,
        "sdpa",
        banded_sdpa,
        "correct",
        "F.scaled_dot_product_attention, rows with no key zeroed",
    ),
]
