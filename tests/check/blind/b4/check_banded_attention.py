"""Blind cases for check_banded_attention (chapter 20), written from the chapter's text only."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import masked_softmax

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor, scale: bool = True) -> Tensor:
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    return masked_softmax(scores, mask) @ v


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _mask(T, window, causal, key_padding, device):
    d = _offsets(T, device)
    band = (d <= window) & (d >= -window)
    if causal:
        band = band & (d >= 0)
    if key_padding is not None:
        band = band & key_padding[:, None, None, :]
    return band


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() < window
    if causal:
        band = band & (d >= 0)
    if key_padding is not None:
        band = band & key_padding[:, None, None, :]
    return _attend(q, k, v, band)


def range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        lo = max(0, t - window)
        hi = t if causal else min(T - 1, t + window)
        band[t, lo:hi] = True  # slices leave out hi
    if key_padding is not None:
        band = band & key_padding[:, None, None, :]
    return _attend(q, k, v, band)


def causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = d.abs() <= window
    if causal:
        band = band & (d <= 0)  # s >= t
    if key_padding is not None:
        band = band & key_padding[:, None, None, :]
    return _attend(q, k, v, band)


def padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    band = _mask(q.shape[2], window, causal, None, q.device)
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    return _attend(q, k, v, band)


def nan_for_empty_rows(q, k, v, window, causal=False, key_padding=None):
    band = _mask(q.shape[2], window, causal, key_padding, q.device)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~band, float("-inf")).softmax(dim=-1) @ v


def no_scale(q, k, v, window, causal=False, key_padding=None):
    band = _mask(q.shape[2], window, causal, key_padding, q.device)
    return _attend(q, k, v, band, scale=False)


def rolled_window_wraps(q, k, v, window, causal=False, key_padding=None):
    """Per offset, torch.roll brings key t + o to row t; nothing stops it wrapping around."""
    B, H, T, Dh = q.shape
    offsets = range(-window, 1 if causal else window + 1)
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    scores, values, valid = [], [], []
    for o in offsets:
        ks = torch.roll(k, shifts=-o, dims=2)
        scores.append((q * ks).sum(-1) / math.sqrt(Dh))
        values.append(torch.roll(v, shifts=-o, dims=2))
        valid.append(torch.roll(real, shifts=-o, dims=1)[:, None, :].expand(B, H, T))
    scores, valid = torch.stack(scores, -1), torch.stack(valid, -1)
    w = masked_softmax(scores, valid)  # (B, H, T, n_offsets)
    return (w.unsqueeze(-1) * torch.stack(values, -2)).sum(-2)


def padding_inverted(q, k, v, window, causal=False, key_padding=None):
    band = _mask(q.shape[2], window, causal, None, q.device)
    if key_padding is not None:
        band = band & ~key_padding[:, None, None, :]  # True marks padding, I thought
    return _attend(q, k, v, band)


def einsum_offsets(q, k, v, window, causal=False, key_padding=None):
    """Correct: full attention written with einsum, the band from |t - s|, a large negative
    score for hidden keys and the weights of an empty row set to zero."""
    B, H, T, Dh = q.shape
    allowed = _mask(T, window, causal, key_padding, q.device)  # (T, T) or (B, 1, T, T)
    allowed = allowed.expand(B, H, T, T)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * Dh**-0.5
    scores = scores.masked_fill(~allowed, -1e30)
    weights = torch.softmax(scores, dim=-1) * allowed.any(dim=-1, keepdim=True)
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def sliding_offsets(q, k, v, window, causal=False, key_padding=None, scale=None):
    """Correct: O(T * w) memory, one shifted copy of k and v per offset, zero-padded at the
    ends and marked invalid there."""
    B, H, T, Dh = q.shape
    scale = Dh**-0.5 if scale is None else scale
    w = min(window, T - 1) if T > 0 else 0
    real = (
        torch.ones(B, T, dtype=torch.bool, device=q.device) if key_padding is None else key_padding
    )
    k_pad = F.pad(k, (0, 0, w, w))  # (B, H, T + 2w, Dh)
    v_pad = F.pad(v, (0, 0, w, w))
    r_pad = F.pad(real, (w, w), value=False)  # (B, T + 2w)
    scores, values, valid = [], [], []
    for o in range(-w, 1 if causal else w + 1):
        start = w + o  # key s = t + o sits at padded index t + w + o
        scores.append((q * k_pad[:, :, start : start + T]).sum(-1) * scale)
        values.append(v_pad[:, :, start : start + T])
        valid.append(r_pad[:, None, start : start + T].expand(B, H, T))
    weights = masked_softmax(torch.stack(scores, -1), torch.stack(valid, -1))
    return torch.einsum("bhto,bhtod->bhtd", weights, torch.stack(values, -2))


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <= window",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        range_end_left_out,
        "mistake",
        "I filled each row with band[t, lo:hi], and the slice leaves out frame hi",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        causal_looks_ahead,
        "mistake",
        "for causal I kept t - s <= 0, the frames after t, instead of s <= t",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        padding_on_queries,
        "mistake",
        "I broadcast key_padding as [:, None, :, None], masking query rows not key columns",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        nan_for_empty_rows,
        "mistake",
        "I used masked_fill(-inf) and softmax, so a frame with no key gets NaN",
    ),
    BlindCase(CHECK, "no_scale", no_scale, "mistake", "I forgot to divide the scores by sqrt(Dh)"),
    BlindCase(
        CHECK,
        "rolled_window_wraps",
        rolled_window_wraps,
        "mistake",
        "I shifted k and v with torch.roll for each offset, so the band wraps around at the ends",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        padding_inverted,
        "mistake",
        "I masked with ~key_padding, reading True as padding",
    ),
    BlindCase(
        CHECK,
        "einsum_offsets",
        einsum_offsets,
        "correct",
        "full attention with einsum, -1e30 for hidden keys, empty rows' weights zeroed",
    ),
    BlindCase(
        CHECK,
        "sliding_offsets",
        sliding_offsets,
        "correct",
        "one zero-padded shifted copy of k and v per offset, invalid ends masked; an "
        "optional scale argument",
    ),
]
