"""Blind set B5, check_banded_attention (chapter 20): local attention as readers write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _softmax_zero_rows(scores: Tensor, allowed: Tensor) -> Tensor:
    scores = scores.masked_fill(~allowed, float("-inf"))
    any_key = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~any_key, 0.0).softmax(-1)
    return weights.masked_fill(~any_key, 0.0)


def _band(T: int, window: int, causal: bool, device=None) -> Tensor:
    t = torch.arange(T, device=device)
    diff = t[:, None] - t[None, :]  # t - s
    band = diff.abs() <= window
    return band & (diff >= 0) if causal else band


def _allowed(q: Tensor, band: Tensor, key_padding: Tensor | None) -> Tensor:
    if key_padding is None:
        return band.expand(q.shape[0], 1, *band.shape)
    return band & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_causal_excludes_self(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    t = torch.arange(T)
    diff = t[:, None] - t[None, :]
    band = diff.abs() <= window
    if causal:
        band = band & (diff > 0)  # strictly the past: a frame does not see itself
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax_zero_rows(scores, _allowed(q, band, key_padding)) @ v


def band_window_as_width(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    band = _band(T, window // 2, causal)  # read the window as the band's whole width
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax_zero_rows(scores, _allowed(q, band, key_padding)) @ v


def band_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, -1e9)  # a frame with no key: uniform, not zero
    return scores.softmax(-1) @ v


def band_softmax_over_queries(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.nan_to_num(scores.softmax(-2))  # dim=-2: over the queries
    return weights @ v


def band_scaled_by_dh(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / q.shape[-1]  # 1 / Dh instead of 1 / sqrt(Dh)
    return _softmax_zero_rows(scores, allowed) @ v


def band_padding_zeroes_keys(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    if key_padding is not None:  # padding keys made zero instead of masked out
        k = k * key_padding[:, None, :, None]
        v = v * key_padding[:, None, :, None]
    allowed = _allowed(q, _band(T, window, causal), None)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax_zero_rows(scores, allowed) @ v


def band_padding_queries_zeroed(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = _softmax_zero_rows(scores, allowed) @ v
    if key_padding is not None:  # and the padding frames' own outputs set to zero as well
        out = out * key_padding[:, None, :, None]
    return out


def band_blocks_need_multiple(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    b = max(window, 1)
    n = T // b  # blocks of b frames; a last partial block is not handled
    qb = q.view(B, H, n, b, Dh)
    kp = F.pad(k, (0, 0, b, b))
    vp = F.pad(v, (0, 0, b, b))
    kw = kp.unfold(2, 3 * b, b)[:, :, :n]  # (B, H, n, Dh, 3b)
    vw = vp.unfold(2, 3 * b, b)[:, :, :n]
    scores = qb @ kw / math.sqrt(Dh)  # (B, H, n, b, 3b)
    offset = torch.arange(b)[:, None] - torch.arange(3 * b)[None, :] + b  # t - s
    band = (offset.abs() <= window) & ((offset >= 0) if causal else True)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    real = F.pad(real, (b, b), value=False).unfold(1, 3 * b, b)[:, :n]  # (B, n, 3b)
    weights = _softmax_zero_rows(scores, band & real[:, None, :, None, :])
    return (weights @ vw.transpose(-2, -1)).reshape(B, H, T, -1)


def band_returns_weights(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _softmax_zero_rows(scores, allowed)
    return weights @ v, weights  # (out, weights), as the package's attention returns


# ---------------------------------------------------------------- correct variants


def band_einsum_masked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full scores by einsum under a band built with triu/tril; empty rows zeroed with where."""
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = torch.triu(ones, diagonal=-window) & torch.tril(ones, diagonal=0 if causal else window)
    allowed = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * q.shape[-1] ** -0.5
    scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    seen = allowed.any(dim=-1, keepdim=True)
    weights = torch.where(seen, scores, torch.zeros_like(scores)).softmax(dim=-1)
    weights = torch.where(seen, weights, torch.zeros_like(weights))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_nan_to_num(q, k, v, window, causal=False, key_padding=None):
    """Softmax over -inf-filled scores; the NaN of an empty row replaced by 0 afterwards."""
    T = q.shape[-2]
    allowed = _allowed(q, _band(T, window, causal), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
    return torch.nan_to_num(weights) @ v


def band_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """One frame at a time: slice its keys s = t - w .. t + w (cut at the ends), drop padding."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window))
        ks, vs = k[:, :, lo : hi + 1], v[:, :, lo : hi + 1]  # (B, H, n, Dh)
        s = (q[:, :, t : t + 1] @ ks.transpose(-2, -1)) / math.sqrt(Dh)  # (B, H, 1, n)
        if key_padding is not None:
            real = key_padding[:, lo : hi + 1][:, None, None, :]  # (B, 1, 1, n)
        else:
            real = torch.ones_like(s, dtype=torch.bool)
        s = s.masked_fill(~real, float("-inf"))
        has = real.any(-1, keepdim=True)
        w = torch.softmax(s.masked_fill(~has, 0.0), dim=-1).masked_fill(~has, 0.0)
        outs.append(w @ vs)  # (B, H, 1, Dv)
    return torch.cat(outs, dim=2)


CASES = [
    BlindCase(
        CHECK,
        "causal_excludes_self",
        band_causal_excludes_self,
        "mistake",
        "For causal I kept t - s > 0, strictly the past, so a frame cannot see itself.",
    ),
    BlindCase(
        CHECK,
        "window_read_as_width",
        band_window_as_width,
        "mistake",
        "I took window as the band's total width and used |t - s| <= window // 2.",
    ),
    BlindCase(
        CHECK,
        "minus_1e9_fill",
        band_minus_1e9,
        "mistake",
        "I filled masked scores with -1e9 instead of -inf and never zeroed empty rows, so "
        "a frame with no key gets the mean of all values.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        band_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries, instead of over the keys.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_dh",
        band_scaled_by_dh,
        "mistake",
        "I divided the scores by Dh instead of sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "padding_keys_zeroed",
        band_padding_zeroes_keys,
        "mistake",
        "I multiplied the padding frames' keys and values by zero instead of masking them, "
        "so they still get weight (a score of 0).",
    ),
    BlindCase(
        CHECK,
        "padding_outputs_zeroed",
        band_padding_queries_zeroed,
        "mistake",
        "On top of masking the padding keys I set the outputs of the padding frames "
        "themselves to zero.",
    ),
    BlindCase(
        CHECK,
        "blocks_need_multiple_of_window",
        band_blocks_need_multiple,
        "mistake",
        "My blocked version cuts T into T // b blocks and ignores a last partial block, so "
        "a length that is not a multiple of the window fails.",
    ),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        band_returns_weights,
        "mistake",
        "I return (out, weights) like the package's attention instead of out alone.",
    ),
    BlindCase(
        CHECK,
        "einsum_triu_tril",
        band_einsum_masked,
        "correct",
        "Scores by einsum, the band from triu and tril of a ones matrix, rows without a "
        "key zeroed with torch.where.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_after_softmax",
        band_nan_to_num,
        "correct",
        "Masked scores set to -inf, the NaN of a row without keys cleaned after the softmax "
        "with nan_to_num (masked_fill stops its gradient).",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A loop over frames: each slices its own keys t - w .. t + w, clipped at the ends, "
        "masks padding and zeroes a row without keys.",
    ),
]
