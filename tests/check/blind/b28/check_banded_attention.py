"""Blind set B28, check_banded_attention (chapter 20): local (banded) attention as readers
write it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_banded_attention"


def _safe_softmax_out(scores: Tensor, allowed: Tensor, v: Tensor) -> Tensor:
    """A right masked softmax and product, shared by the mistakes that are elsewhere."""
    scores = scores.masked_fill(~allowed, float("-inf"))
    has_key = allowed.any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0.0).softmax(-1).masked_fill(~has_key, 0.0)
    return weights @ v


def _offsets(T: int, device) -> Tensor:
    idx = torch.arange(T, device=device)
    return idx[:, None] - idx[None, :]  # (T, T): t - s


def _padding(key_padding: Tensor | None) -> Tensor | bool:
    return True if key_padding is None else key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_strict(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d.abs() < window  # within the window
    if causal:
        band &= d >= 0
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    band = _offsets(q.shape[-2], q.device).abs() <= window
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


def band_causal_no_window(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = d >= 0 if causal else d.abs() <= window  # causal: every earlier frame
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.triu(0).tril(window) if causal else ones.tril(window).triu(-window)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


def band_loop_range_short(q, k, v, window, causal=False, key_padding=None):
    B, H, T, _ = q.shape
    outs = []
    for t in range(T):
        end = t if causal else min(T, t + window)
        keys = torch.arange(max(0, t - window), end + 1 if causal else end, device=q.device)
        scores = (q[:, :, t : t + 1] @ k[:, :, keys].transpose(-2, -1)) / math.sqrt(q.shape[-1])
        allowed = torch.ones_like(scores, dtype=torch.bool)
        if key_padding is not None:
            allowed = allowed & key_padding[:, keys][:, None, None, :]
        outs.append(_safe_softmax_out(scores, allowed, v[:, :, keys]))
    return torch.cat(outs, dim=2)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        band = band & key_padding[:, None, :, None]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band, v)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    allowed = band & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
    return weights @ v


def band_fill_large_negative(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    allowed = band & _padding(key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, -1e9).softmax(-1)
    return weights @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    return _safe_softmax_out(q @ k.transpose(-2, -1), band & _padding(key_padding), v)


def band_scale_by_dv(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


def band_padding_unsqueeze_once(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        band = band & key_padding.unsqueeze(1)  # (B, 1, T)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band, v)


def band_roll_neighbours(q, k, v, window, causal=False, key_padding=None):
    offsets = range(0, window + 1) if causal else range(-window, window + 1)
    real = (
        torch.ones(q.shape[0], q.shape[2], dtype=torch.bool) if key_padding is None else key_padding
    )
    scores, values, visible = [], [], []
    for o in offsets:  # key t - o for query t
        k_o = torch.roll(k, shifts=o, dims=2)
        scores.append((q * k_o).sum(-1) / math.sqrt(q.shape[-1]))  # (B, H, T)
        values.append(torch.roll(v, shifts=o, dims=2))
        visible.append(torch.roll(real, shifts=o, dims=1)[:, None, :].expand_as(scores[-1]))
    scores, visible = torch.stack(scores, -1), torch.stack(visible, -1)  # (B, H, T, O)
    values = torch.stack(values, -2)  # (B, H, T, O, Dv)
    scores = scores.masked_fill(~visible, float("-inf"))
    has_key = visible.any(-1, keepdim=True)
    weights = scores.masked_fill(~has_key, 0).softmax(-1).masked_fill(~has_key, 0)
    return (weights.unsqueeze(-2) @ values).squeeze(-2)


def band_returns_pair(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(-window)
    return attention(q, k, v, band & _padding(key_padding))  # (out, weights)


def band_float32(q, k, v, window, causal=False, key_padding=None):
    q, k, v = q.float(), k.float(), v.float()
    d = _offsets(q.shape[-2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax_out(scores, band & _padding(key_padding), v)


# ---------------------------------------------------------------- correct variants


def band_full_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """Full attention under a band mask built from |t - s|, through the package's attention."""
    d = _offsets(q.shape[-2], q.device)
    band = (d.abs() <= window) & ((d >= 0) if causal else torch.ones_like(d, dtype=torch.bool))
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    out, _ = attention(q, k, v, mask)
    return out


def band_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """One frame at a time: slice its neighbours, softmax over the real ones, zeros if none."""
    B, H, T, Dh = q.shape
    scale = Dh**-0.5
    rows = []
    for t in range(T):
        lo, hi = max(0, t - window), (t if causal else min(T - 1, t + window))
        ks, vs = k[:, :, lo : hi + 1], v[:, :, lo : hi + 1]
        s = torch.einsum("bhd,bhsd->bhs", q[:, :, t], ks) * scale
        if key_padding is not None:
            real = key_padding[:, None, lo : hi + 1].expand_as(s)
            s = s.masked_fill(~real, float("-inf"))
            none = ~real.any(-1, keepdim=True)
            w = s.masked_fill(none, 0.0).softmax(-1).masked_fill(none, 0.0)
        else:
            w = s.softmax(-1)
        rows.append(torch.einsum("bhs,bhsd->bhd", w, vs))
    return torch.stack(rows, dim=2)


def band_sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    """F.scaled_dot_product_attention with the band as a boolean mask; rows with no key see
    every key inside the call and are zeroed after it."""
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    mask = ones.tril(0 if causal else window).triu(-window)[None, None]  # (1, 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    empty = ~mask.any(-1, keepdim=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty)
    return out.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_strict,
        "mistake",
        "I wrote |t - s| < window, so the frames exactly window away are left out.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used the causal flag: the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_without_window",
        band_causal_no_window,
        "mistake",
        "With causal=True I used s <= t alone and forgot that the window still applies.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For the causal band I wrote ones.triu(0).tril(window), which keeps s >= t: the "
        "frame looks ahead instead of back.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_loop_range_short,
        "mistake",
        "A loop over frames with torch.arange(t - window, t + window): the end is left out, "
        "so the two-sided band is one frame short on the right.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as [:, None, :, None], which masks the queries, not the keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_frame_without_keys",
        band_nan_rows,
        "mistake",
        "masked_fill with -inf and a plain softmax: a frame whose neighbours are all padding "
        "gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_large_negative,
        "mistake",
        "I filled the hidden scores with -1e9, so a frame with no visible key averages all the "
        "values instead of giving zeros.",
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
        "scaled_by_value_width",
        band_scale_by_dv,
        "mistake",
        "I divided by the square root of v's last dimension, Dv, not q's Dh.",
    ),
    BlindCase(
        CHECK,
        "padding_unsqueezed_once",
        band_padding_unsqueeze_once,
        "mistake",
        "I made the padding mask with key_padding.unsqueeze(1), (B, 1, T), which broadcasts "
        "the batch against the heads.",
    ),
    BlindCase(
        CHECK,
        "neighbours_by_roll",
        band_roll_neighbours,
        "mistake",
        "I gathered each frame's neighbours with torch.roll, which wraps around, so the first "
        "and last frames see frames from the other end.",
    ),
    BlindCase(
        CHECK,
        "returns_out_and_weights",
        band_returns_pair,
        "mistake",
        "I returned what the package's attention returns, the pair (out, weights).",
    ),
    BlindCase(
        CHECK,
        "float32_inside",
        band_float32,
        "mistake",
        "I turned q, k and v into float32 first, so float64 inputs come back as float32.",
    ),
    BlindCase(
        CHECK,
        "full_attention_band_mask",
        band_full_attention,
        "correct",
        "Full attention with a band built from |t - s| and the padding mask, through the "
        "package's attention.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A loop over frames, slicing each one's neighbours, einsum for the products.",
    ),
    BlindCase(
        CHECK,
        "sdpa_band_mask",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention with a boolean band mask; frames without keys zeroed.",
    ),
]
