"""Blind set B18, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """A right masked softmax (zero rows where nothing is visible)."""
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def _offsets(T: int, device) -> Tensor:
    t = torch.arange(T, device=device)
    return t[:, None] - t[None, :]  # (T, T): t - s


def _attend(q: Tensor, k: Tensor, v: Tensor, band: Tensor, key_padding: Tensor | None) -> Tensor:
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax(scores, mask) @ v


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, band, key_padding)


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d.abs() <= window + 1) & ((d >= 0) if causal else True)  # w neighbours + itself
    return _attend(q, k, v, band, key_padding)


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.zeros(T, T, dtype=torch.bool, device=q.device)
    for t in range(T):
        end = t if causal else t + window  # range(t - w, t + w): forgot the + 1
        for s in range(max(0, t - window), min(T, end)):
            band[t, s] = True
    return _attend(q, k, v, band, key_padding)


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d >= 0) & (d <= window)  # a window looks back
    return _attend(q, k, v, band, key_padding)


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    return _attend(q, k, v, d.abs() <= window, key_padding)


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(window).triu(-window)
    if causal:
        band = band.triu()  # keys up to t... on the wrong side of the diagonal
    return _attend(q, k, v, band, key_padding)


def band_zero_padded_keys(q, k, v, window, causal=False, key_padding=None):
    """Each frame gets exactly 2w + 1 keys (w + 1 when causal) from a zero-padded copy."""
    B, H, T, Dh = q.shape
    left, right = window, 0 if causal else window
    kp = F.pad(k, (0, 0, left, right))
    vp = F.pad(v, (0, 0, left, right))
    width = left + right + 1
    kw = kp.unfold(2, width, 1).transpose(-2, -1)  # (B, H, T, width, Dh)
    vw = vp.unfold(2, width, 1).transpose(-2, -1)
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(Dh)  # (B, H, T, width)
    if key_padding is None:
        real = torch.ones(B, T, dtype=torch.bool, device=q.device)
    else:
        real = key_padding
    real = F.pad(real, (left, right), value=True).unfold(1, width, 1)  # outside: zeros, "real"
    weights = _softmax(scores, real[:, None])
    return (weights[..., None] * vw).sum(-2)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    rel = torch.arange(-window, right + 1, device=q.device)
    idx = (torch.arange(T, device=q.device)[:, None] + rel).clamp(0, T - 1)  # (T, width)
    kw = k[:, :, idx]  # (B, H, T, width, Dh)
    vw = v[:, :, idx]
    scores = (q[..., None, :] * kw).sum(-1) / math.sqrt(Dh)
    if key_padding is None:
        mask = torch.ones(B, 1, T, idx.shape[1], dtype=torch.bool, device=q.device)
    else:
        mask = key_padding[:, idx][:, None]
    return (_softmax(scores, mask)[..., None] * vw).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T, q.device) % T  # circular distance
    dist = torch.minimum(d, T - d)
    band = dist <= window
    if causal:
        band = band & (d <= window)
    return _attend(q, k, v, band, key_padding)


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    return _attend(q, k, v, band, None)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    return _attend(q, k, v, band, None if key_padding is None else ~key_padding)


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band if key_padding is None else band & key_padding[:, None, :, None]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _softmax(scores, mask) @ v


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    mask = (d <= window) & (d >= (0 if causal else -window))
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2], q.device)
    band = (d <= window) & (d >= (0 if causal else -window))
    mask = band if key_padding is None else band & key_padding[:, None, None, :]
    return _softmax(q @ k.transpose(-2, -1), mask) @ v


# ---------------------------------------------------------------- correct variants


def band_full_masked(q, k, v, window, causal=False, key_padding=None):
    """Full attention under a band mask built from arange offsets; einsum for both products."""
    T = q.size(-2)
    pos = torch.arange(T, device=q.device)
    allowed = (pos[:, None] - pos[None, :]).abs() <= window
    if causal:
        allowed = allowed & (pos[None, :] <= pos[:, None])
    allowed = allowed[None, None]
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * q.size(-1) ** -0.5
    scores = scores.masked_fill(~allowed, float("-inf"))
    visible = allowed.any(dim=-1, keepdim=True)
    weights = torch.softmax(torch.where(visible, scores, torch.zeros_like(scores)), dim=-1)
    weights = torch.where(visible, weights, torch.zeros_like(weights))
    return torch.einsum("bhts,bhsv->bhtv", weights, v)


def band_frame_loop(q, k, v, window, causal=False, key_padding=None):
    """One frame at a time, over the slice of its neighbours only."""
    B, H, T, Dh = q.shape
    outputs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        scores = q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1) / math.sqrt(Dh)
        if key_padding is None:
            mask = torch.ones(B, 1, 1, hi - lo, dtype=torch.bool, device=q.device)
        else:
            mask = key_padding[:, None, None, lo:hi]
        outputs.append(_softmax(scores, mask) @ v[:, :, lo:hi])  # (B, H, 1, Dv)
    return torch.cat(outputs, dim=2)


def band_sdpa(q, k, v, window, causal=False, key_padding=None, block_size=None):
    """F.scaled_dot_product_attention under the band & padding mask, with no empty row handed
    to it (those rows attend to everything and are zeroed after); an unused block_size
    argument with a default."""
    T = q.shape[-2]
    band = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = band.tril(0 if causal else window).triu(-window)
    mask = band.expand(q.shape[0], 1, T, T)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    empty = ~mask.any(-1, keepdim=True)  # (B, 1, T, 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | empty)
    return out.masked_fill(empty, 0.0)


CASES = [
    BlindCase(
        CHECK,
        "band_too_narrow",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window instead of <=.",
    ),
    BlindCase(
        CHECK,
        "band_too_wide",
        band_too_wide,
        "mistake",
        "I used |t - s| <= window + 1, thinking the window counts the neighbours besides the "
        "frame itself.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "My loop fills range(t - w, t + w), which leaves out s = t + w (and s = t when causal).",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "I always look back only (0 <= t - s <= w), also when causal=False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I ignore causal: the band is two-sided either way.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I cut the band with triu() instead of tril(), keeping the frames ahead.",
    ),
    BlindCase(
        CHECK,
        "zero_padding_counted",
        band_zero_padded_keys,
        "mistake",
        "A sliding window over a zero-padded copy of k and v, and the pad positions at the "
        "sequence's ends count as keys (score 0).",
    ),
    BlindCase(
        CHECK,
        "indices_clamped",
        band_clamped_indices,
        "mistake",
        "I gather the neighbours t - w .. t + w with indices clamped to [0, T - 1], so the end "
        "frames see the first or last frame several times.",
    ),
    BlindCase(
        CHECK,
        "band_wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance modulo T (as torch.roll would), so the band wraps around "
        "from the end to the start.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I forgot key_padding altogether.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I used ~key_padding, taking True as padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I broadcast key_padding as (B, 1, T, 1), masking the padded queries instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_empty_rows",
        band_nan_rows,
        "mistake",
        "Plain softmax after filling -inf, so a frame with no visible key gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled with -1e9 instead of -inf, so a frame with no visible key averages over "
        "every value instead of giving zeros.",
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
        "full_attention_einsum",
        band_full_masked,
        "correct",
        "Full attention under a band mask from arange offsets, einsum products, torch.where for "
        "the empty rows.",
    ),
    BlindCase(
        CHECK,
        "frame_by_frame",
        band_frame_loop,
        "correct",
        "A Python loop over frames, each attending only to its slice of neighbours.",
    ),
    BlindCase(
        CHECK,
        "sdpa_with_empty_rows_zeroed",
        band_sdpa,
        "correct",
        "F.scaled_dot_product_attention under the mask; rows with no key attend to everything "
        "and are zeroed after; an unused block_size argument with a default.",
    ),
]
