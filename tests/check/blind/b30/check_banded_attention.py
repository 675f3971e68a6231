"""Blind set B30, check_banded_attention (chapter 20): local attention in a band as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .. import BlindCase

CHECK = "check_banded_attention"


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """Right masked attention (zeros where a query sees no key), shared by the mistakes that
    are in the mask."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    has_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0) @ v


def _offsets(T: int) -> Tensor:
    idx = torch.arange(T)
    return idx[:, None] - idx[None, :]  # (T, T): t - s


def _padding(mask: Tensor, key_padding: Tensor | None) -> Tensor:
    return mask if key_padding is None else mask & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def band_too_narrow(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() < window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, _padding(mask, key_padding))


def band_too_wide(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() <= window + 1) & ((d >= 0) if causal else True)  # the frame itself + w
    return _attend(q, k, v, _padding(mask, key_padding))


def band_range_end_left_out(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    mask = torch.zeros(T, T, dtype=torch.bool)
    for t in range(T):
        end = t + 1 if causal else t + window
        for s in range(max(0, t - window), min(T, end)):
            mask[t, s] = True
    return _attend(q, k, v, _padding(mask, key_padding))


def band_always_causal(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d >= 0) & (d <= window)  # a frame looks back only
    return _attend(q, k, v, _padding(mask, key_padding))


def band_causal_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    return _attend(q, k, v, _padding(d.abs() <= window, key_padding))


def band_causal_looks_ahead(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool)
    mask = ones.triu(0).tril(window) if causal else ones.tril(window).triu(-window)
    return _attend(q, k, v, _padding(mask, key_padding))


def band_causal_no_window(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    ones = torch.ones(T, T, dtype=torch.bool)
    mask = ones.tril() if causal else ones.tril(window).triu(-window)  # causal: the past
    return _attend(q, k, v, _padding(mask, key_padding))


def band_zero_padded_windows(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    k_win = F.pad(k, (0, 0, window, right)).unfold(2, window + right + 1, 1)  # (B,H,T,Dh,W)
    v_win = F.pad(v, (0, 0, window, right)).unfold(2, window + right + 1, 1)  # (B,H,T,Dv,W)
    scores = torch.einsum("bhtd,bhtdw->bhtw", q, k_win) / math.sqrt(Dh)
    if key_padding is not None:
        real = F.pad(key_padding, (window, right), value=True).unfold(1, window + right + 1, 1)
        scores = scores.masked_fill(~real[:, None], float("-inf"))
    weights = scores.softmax(-1).nan_to_num()
    return torch.einsum("bhtw,bhtdw->bhtd", weights, v_win)


def band_clamped_indices(q, k, v, window, causal=False, key_padding=None):
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    rel = torch.arange(-window, right + 1)
    idx = (torch.arange(T)[:, None] + rel).clamp(0, T - 1)  # (T, W): stay inside the sequence
    k_win, v_win = k[:, :, idx], v[:, :, idx]  # (B, H, T, W, D)
    scores = (q.unsqueeze(-2) * k_win).sum(-1) / math.sqrt(Dh)  # (B, H, T, W)
    if key_padding is not None:
        scores = scores.masked_fill(~key_padding[:, idx][:, None], float("-inf"))
    weights = scores.softmax(-1).nan_to_num()
    return (weights.unsqueeze(-1) * v_win).sum(-2)


def band_wraps_around(q, k, v, window, causal=False, key_padding=None):
    T = q.shape[2]
    d = _offsets(T) % T  # circular distance
    d = torch.minimum(d, T - d) if not causal else d
    mask = d <= window
    return _attend(q, k, v, _padding(mask, key_padding))


def band_padding_ignored(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, mask)


def band_padding_inverted(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    return _attend(q, k, v, _padding(mask, None if key_padding is None else ~key_padding))


def band_padding_on_queries(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = (d.abs() <= window) & ((d >= 0) if causal else True)
    if key_padding is not None:
        mask = mask & key_padding[:, None, :, None]  # (B, 1, T, 1)
    return _attend(q, k, v, mask)


def band_nan_rows(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def band_fill_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v


def band_no_scale(q, k, v, window, causal=False, key_padding=None):
    d = _offsets(q.shape[2])
    mask = _padding((d.abs() <= window) & ((d >= 0) if causal else True), key_padding)
    return _attend(q * math.sqrt(q.shape[-1]), k, v, mask)  # cancels _attend's scale


# ---------------------------------------------------------------- correct variants


def band_full_masked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    T = q.shape[-2]
    pos = torch.arange(T, device=q.device)
    dist = pos.view(T, 1) - pos.view(1, T)  # t - s
    allowed = dist.abs() <= window
    if causal:
        allowed = allowed & (dist >= 0)
    if key_padding is not None:
        allowed = allowed & key_padding.view(-1, 1, 1, T)
    scores = torch.einsum("bhtd,bhsd->bhts", q, k) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~allowed, float("-inf"))
    sees = allowed.any(-1, keepdim=True)
    weights = torch.softmax(torch.where(sees, scores, torch.zeros_like(scores)), dim=-1)
    weights = torch.where(sees, weights, torch.zeros_like(weights))
    return torch.einsum("bhts,bhsd->bhtd", weights, v)


def band_frame_loop(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
) -> Tensor:
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        ks, vs = k[:, :, lo:hi], v[:, :, lo:hi]  # (B, H, W, D)
        scores = (ks @ q[:, :, t, :, None]).squeeze(-1) / math.sqrt(Dh)  # (B, H, W)
        real = (
            torch.ones(B, hi - lo, dtype=torch.bool)
            if key_padding is None
            else key_padding[:, lo:hi]
        )
        seen = real.any(-1)[:, None, None]  # (B, 1, 1)
        scores = scores.masked_fill(~real[:, None, :], float("-inf"))
        scores = torch.where(seen, scores, torch.zeros_like(scores))
        w = torch.where(seen, scores.softmax(-1), torch.zeros_like(scores))
        outs.append((w.unsqueeze(-2) @ vs).squeeze(-2))  # (B, H, Dv)
    return torch.stack(outs, dim=2)


def band_unfold_masked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    causal: bool = False,
    key_padding: Tensor | None = None,
    scale: float | None = None,
) -> Tensor:
    B, H, T, Dh = q.shape
    right = 0 if causal else window
    W = window + right + 1
    k_win = F.pad(k, (0, 0, window, right)).unfold(2, W, 1)  # (B, H, T, Dh, W)
    v_win = F.pad(v, (0, 0, window, right)).unfold(2, W, 1)  # (B, H, T, Dv, W)
    real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
    real = F.pad(real, (window, right), value=False).unfold(1, W, 1)  # (B, T, W): no zeros
    scale = 1 / math.sqrt(Dh) if scale is None else scale
    scores = (q.unsqueeze(-1) * k_win).sum(-2) * scale  # (B, H, T, W)
    mask = real[:, None]  # (B, 1, T, W)
    any_key = mask.any(-1, keepdim=True)
    scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~any_key, 0.0)
    weights = scores.softmax(-1).masked_fill(~any_key, 0.0)
    return (v_win * weights.unsqueeze(-2)).sum(-1)


CASES = [
    BlindCase(
        CHECK,
        "band_strict_less",
        band_too_narrow,
        "mistake",
        "I wrote |t - s| < window, so the band is one frame too narrow on each side.",
    ),
    BlindCase(
        CHECK,
        "band_window_plus_one",
        band_too_wide,
        "mistake",
        "I allowed |t - s| <= window + 1, counting the frame itself apart from the window.",
    ),
    BlindCase(
        CHECK,
        "range_end_left_out",
        band_range_end_left_out,
        "mistake",
        "I filled the mask with range(t - window, t + window), which leaves out the frame "
        "t + window.",
    ),
    BlindCase(
        CHECK,
        "always_one_sided",
        band_always_causal,
        "mistake",
        "My band only looks back (0 <= t - s <= window), also when causal is False.",
    ),
    BlindCase(
        CHECK,
        "causal_ignored",
        band_causal_ignored,
        "mistake",
        "I never used the causal argument, so the band is always two-sided.",
    ),
    BlindCase(
        CHECK,
        "causal_looks_ahead",
        band_causal_looks_ahead,
        "mistake",
        "For causal I took triu(0).tril(window), which keeps the frames after t instead of before.",
    ),
    BlindCase(
        CHECK,
        "causal_without_window",
        band_causal_no_window,
        "mistake",
        "When causal I used tril() alone, so a frame sees its whole past, not just window frames.",
    ),
    BlindCase(
        CHECK,
        "zero_padded_windows",
        band_zero_padded_windows,
        "mistake",
        "I padded k and v with zeros and unfolded windows of 2w + 1, so the frames near the "
        "ends attend to zero keys.",
    ),
    BlindCase(
        CHECK,
        "clamped_indices",
        band_clamped_indices,
        "mistake",
        "I gathered the window with indices clamped to [0, T - 1], so the end frames count "
        "the first or last frame several times.",
    ),
    BlindCase(
        CHECK,
        "wraps_around",
        band_wraps_around,
        "mistake",
        "I measured the distance modulo T, so the band wraps around the ends of the sequence.",
    ),
    BlindCase(
        CHECK,
        "padding_ignored",
        band_padding_ignored,
        "mistake",
        "I built the band mask but never combined it with key_padding.",
    ),
    BlindCase(
        CHECK,
        "padding_inverted",
        band_padding_inverted,
        "mistake",
        "I combined the band with ~key_padding, reading True as padding.",
    ),
    BlindCase(
        CHECK,
        "padding_on_queries",
        band_padding_on_queries,
        "mistake",
        "I reshaped key_padding to (B, 1, T, 1), so it masks the padded queries instead of "
        "the keys.",
    ),
    BlindCase(
        CHECK,
        "nan_for_lonely_frame",
        band_nan_rows,
        "mistake",
        "I filled with -inf and took a plain softmax, so a frame whose neighbours are all "
        "padding gets NaN.",
    ),
    BlindCase(
        CHECK,
        "fill_minus_1e9",
        band_fill_minus_1e9,
        "mistake",
        "I filled the masked scores with -1e9, so a frame that sees no key averages the "
        "values of all frames instead of getting zeros.",
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
        "Full attention with einsum under a band mask built from the distance t - s, "
        "torch.where to zero the frames that see no key.",
    ),
    BlindCase(
        CHECK,
        "loop_over_frames",
        band_frame_loop,
        "correct",
        "A loop over the frames, each slicing its own window of keys and values.",
    ),
    BlindCase(
        CHECK,
        "unfold_with_masked_edges",
        band_unfold_masked,
        "correct",
        "Sliding windows with F.pad and unfold, the padded edge positions masked like "
        "padding; an optional scale argument.",
    ),
]
