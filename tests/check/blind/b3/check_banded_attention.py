"""Blind cases for check_banded_attention (chapter 20), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s, query t on the rows


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: float | None = None) -> Tensor:
    """Masked attention that gives a query without any visible key a zero output."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    mask = mask.expand_as(scores)
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_one_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window
    if causal:
        band = band & (d >= 0)
    return _attend(q, k, v, band & _padding(key_padding))


def band_one_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window + 1  # window frames on each side of the neighbour
    if causal:
        band = band & (d >= 0)
    return _attend(q, k, v, band & _padding(key_padding))


def range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype, device=v.device)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    for t in range(T):
        end = t if causal else min(T, t + window)  # range(t - w, t + w): t + w left out
        keys = list(range(max(0, t - window), end))
        if not keys:
            continue
        s = torch.tensor(keys)
        scores = (q[:, :, t : t + 1] @ k[:, :, s].transpose(-2, -1)) / math.sqrt(q.shape[-1])
        visible = real[:, s][:, None, None, :]
        has = visible.any(-1, keepdim=True)
        scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~has, 0.0)
        w = scores.softmax(-1).masked_fill(~has, 0.0)
        out[:, :, t : t + 1] = w @ v[:, :, s]
    return out


def always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # the past window only, whatever causal says
    return _attend(q, k, v, band & _padding(key_padding))


def causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d <= 0)  # s >= t: the mask laid along the wrong axis
    return _attend(q, k, v, band & _padding(key_padding))


def indices_clamped(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    offsets = torch.arange(-window, 1 if causal else window + 1)
    idx = (torch.arange(T)[:, None] + offsets[None, :]).clamp(0, T - 1)  # (T, n): the neighbours
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, n, D)
    scores = (q[:, :, :, None, :] * k_win).sum(-1) / math.sqrt(Dh)  # (B, H, T, n)
    mask = torch.ones(B, 1, T, len(offsets), dtype=torch.bool)
    if key_padding is not None:
        mask = key_padding[:, idx][:, None]
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    w = scores.softmax(-1).masked_fill(~has, 0.0)
    return (w[..., None] * v_win).sum(-2)


def zero_padding_counted(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    n = window + 1 + right
    k_win = F.pad(k, (0, 0, window, right)).unfold(2, n, 1)  # (B, H, T, Dh, n), zeros at the ends
    v_win = F.pad(v, (0, 0, window, right)).unfold(2, n, 1)
    scores = (q[..., None] * k_win).sum(-2) / math.sqrt(Dh)  # (B, H, T, n)
    if key_padding is not None:
        real = F.pad(key_padding, (window, right), value=True).unfold(1, n, 1)  # (B, T, n)
        scores = scores.masked_fill(~real[:, None], float("-inf"))
    w = scores.softmax(-1).nan_to_num(0.0)
    return (w[..., None, :] * v_win).sum(-1)


def padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    pad = True if key_padding is None else key_padding[:, None, :, None]  # (B, 1, T, 1)
    return _attend(q, k, v, band & pad)


def nan_for_empty_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    mask = band & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v


def no_scaling(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band & _padding(key_padding), scale=1.0)


def window_wraps_around(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    shifts = range(0, window + 1) if causal else range(-window, window + 1)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    # key t - s for every shift s, by rolling the sequence: frame 0's left neighbour is T - 1
    k_all = torch.stack([torch.roll(k, s, dims=2) for s in shifts], dim=-2)  # (B, H, T, n, Dh)
    v_all = torch.stack([torch.roll(v, s, dims=2) for s in shifts], dim=-2)
    r_all = torch.stack([torch.roll(real, s, dims=1) for s in shifts], dim=-1)  # (B, T, n)
    scores = (q[..., None, :] * k_all).sum(-1) / math.sqrt(Dh)
    mask = r_all[:, None]
    has = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has, 0.0)
    w = scores.softmax(-1).masked_fill(~has, 0.0)
    return (w[..., None] * v_all).sum(-2)


# ---------------------------------------------------------------- correct variants


def full_attention_band_mask(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d >= 0)
    return _attend(q, k, v, band & _padding(key_padding))


def per_frame_loop(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    out = v.new_zeros(B, H, T, v.shape[-1])
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        kt, vt = k[:, :, lo:hi], v[:, :, lo:hi]
        scores = torch.einsum("bhd,bhsd->bhs", q[:, :, t], kt) / math.sqrt(Dh)  # (B, H, n)
        visible = real[:, None, lo:hi].expand_as(scores)
        for b in range(B):
            if not visible[b, 0].any():
                continue  # every neighbour is padding: the output stays zero
            w = scores[b].masked_fill(~visible[b], float("-inf")).softmax(-1)  # (H, n)
            out[b, :, t] = torch.einsum("hs,hsd->hd", w, vt[b])
    return out


def finite_fill_then_zero(q, k, v, window, causal=False, key_padding=None, scale=None):
    T = q.shape[-2]
    i = torch.arange(T, device=q.device)
    lo = i[:, None] - window <= i[None, :]
    hi = i[None, :] <= (i[:, None] if causal else i[:, None] + window)
    allowed = (lo & hi)[None, None]  # (1, 1, T, T)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * scale
    scores = torch.where(allowed, scores, torch.full_like(scores, -1e9))  # not -inf: no NaN
    weights = scores.softmax(-1) * allowed.any(-1, keepdim=True)  # rows without keys: zero
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


CASES = [
    BlindCase(
        CHECK,
        "band_one_too_narrow",
        band_one_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <= window: the band is one frame too narrow on "
        "each side",
    ),
    BlindCase(
        CHECK,
        "band_one_too_wide",
        band_one_too_wide,
        "mistake",
        "I wrote |t - s| <= window + 1: the band is one frame too wide on each side",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        range_end_left_out,
        "mistake",
        "a loop over frames with range(t - window, t + window) (and range(t - window, t) "
        "when causal): the end is left out, so the frame t + window (or t itself) is missing",
    ),
    BlindCase(
        CHECK,
        "always_causal",
        always_causal,
        "mistake",
        "I ignored causal and always used the one-sided band 0 <= t - s <= window, also when "
        "the two-sided band is asked",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        causal_looks_ahead,
        "mistake",
        "for causal I kept s >= t instead of s <= t: the mask is laid along the wrong axis, "
        "so each frame looks ahead",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        indices_clamped,
        "mistake",
        "I gathered the keys t - window .. t + window with the indices clamped to [0, T - 1], "
        "so the frames at the ends count the first or last frame several times",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted",
        zero_padding_counted,
        "mistake",
        "I zero-padded the keys at both ends and unfolded windows, without masking the added "
        "zeros, so they count as keys with score 0",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        padding_on_queries,
        "mistake",
        "I laid key_padding over the queries, key_padding[:, None, :, None], instead of over "
        "the keys",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        nan_for_empty_rows,
        "mistake",
        "I filled the masked scores with -inf and took a plain softmax, so a frame that sees "
        "no key gets NaN instead of zeros",
    ),
    BlindCase(
        CHECK,
        "no_scaling",
        no_scaling,
        "mistake",
        "I forgot to divide the scores by sqrt(Dh)",
    ),
    BlindCase(
        CHECK,
        "window_wraps_around",
        window_wraps_around,
        "mistake",
        "I built the neighbours with torch.roll, so the window wraps around: the first frames "
        "see the last ones and the last frames see the first ones",
    ),
    BlindCase(
        CHECK,
        "full_attention_band_mask",
        full_attention_band_mask,
        "correct",
        "full T x T attention under a band mask built from t - s, padding and-ed in, rows "
        "without keys set to zero",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        per_frame_loop,
        "correct",
        "a loop over the frames slicing the keys lo .. hi with einsum, skipping a sentence's "
        "frame whose neighbours are all padding",
    ),
    BlindCase(
        CHECK,
        "finite_fill_then_zero",
        finite_fill_then_zero,
        "correct",
        "einsum, -1e9 instead of -inf for the masked scores, then the weights of a frame "
        "without keys multiplied by 0; extra scale=None argument",
    ),
]
