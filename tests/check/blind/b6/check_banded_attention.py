"""Blind set B6, check_banded_attention (chapter 20): banded local attention as readers write
it."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial.attention import attention

from .. import BlindCase

CHECK = "check_banded_attention"


def _offsets(T: int, device) -> Tensor:
    i = torch.arange(T, device=device)
    return i[:, None] - i[None, :]  # (T, T): t - s


def _safe_softmax(scores: Tensor, allowed: Tensor) -> Tensor:
    """Softmax over the allowed keys; zeros (and zero gradients) where a row has none."""
    has_key = allowed.any(-1, keepdim=True)
    scores = scores.masked_fill(~allowed, float("-inf")).masked_fill(~has_key, 0.0)
    return scores.softmax(-1).masked_fill(~has_key, 0.0)


def _padding(allowed: Tensor, key_padding: Tensor | None) -> Tensor:
    if key_padding is None:
        return allowed
    return allowed & key_padding[:, None, None, :]


# ---------------------------------------------------------------- mistakes


def banded_no_abs(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = (d <= window) & (d >= 0) if causal else d <= window  # abs() forgotten
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax(scores, _padding(allowed, key_padding)) @ v


def banded_causal_without_window(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = d >= 0 if causal else d.abs() <= window  # causal: the whole past, no window
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax(scores, _padding(allowed, key_padding)) @ v


def banded_minus_1e9(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = (d.abs() <= window) & (d >= 0 if causal else True)
    allowed = _padding(allowed, key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, -1e9)  # the Annotated Transformer's constant
    return scores.softmax(-1) @ v


def banded_window_as_width(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    half = window // 2  # a window of w frames, centred on t
    d = _offsets(q.shape[-2], q.device)
    allowed = (d.abs() <= half) & (d >= 0 if causal else True)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax(scores, _padding(allowed, key_padding)) @ v


def banded_zero_padded_weights(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = (d.abs() <= window) & (d >= 0 if causal else True)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = _safe_softmax(scores, allowed.expand_as(scores))
    if key_padding is not None:
        weights = weights * key_padding[:, None, None, :]  # padding zeroed after the softmax
    return weights @ v


def banded_padding_scores_multiplied(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = (d.abs() <= window) & (d >= 0 if causal else True)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if key_padding is not None:
        scores = scores * key_padding[:, None, None, :]  # padding keys get a score of 0
    return _safe_softmax(scores, allowed.expand_as(scores)) @ v


def banded_softmax_over_queries(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = _padding((d.abs() <= window) & (d >= 0 if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    has_query = allowed.any(-2, keepdim=True)
    weights = scores.masked_fill(~has_query, 0.0).softmax(-2)  # dim=-2
    return weights.masked_fill(~allowed, 0.0) @ v


def banded_unfold_zero_pad(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    B, H, T, Dh = q.shape
    w = window
    k_pad = F.pad(k, (0, 0, w, w))  # zero frames at both ends
    v_pad = F.pad(v, (0, 0, w, w))
    k_win = k_pad.unfold(2, 2 * w + 1, 1)  # (B, H, T, Dh, 2w + 1): keys t - w .. t + w
    v_win = v_pad.unfold(2, 2 * w + 1, 1)
    scores = torch.einsum("bhtd,bhtdc->bhtc", q, k_win) / math.sqrt(Dh)
    c = torch.arange(2 * w + 1, device=q.device)
    allowed = (c <= w) if causal else torch.ones_like(c, dtype=torch.bool)  # (2w + 1,)
    allowed = allowed.expand(B, H, T, 2 * w + 1)
    if key_padding is not None:
        kp = F.pad(key_padding, (w, w), value=True).unfold(1, 2 * w + 1, 1)  # (B, T, 2w + 1)
        allowed = allowed & kp[:, None]
    weights = _safe_softmax(scores, allowed)
    return torch.einsum("bhtc,bhtdc->bhtd", weights, v_win)


def banded_window_zero_shortcut(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    if window == 0:
        return v.clone()  # each frame sees only itself: its weight is 1
    d = _offsets(q.shape[-2], q.device)
    allowed = _padding((d.abs() <= window) & (d >= 0 if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return _safe_softmax(scores, allowed) @ v


def banded_scaled_by_window(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    d = _offsets(q.shape[-2], q.device)
    allowed = _padding((d.abs() <= window) & (d >= 0 if causal else True), key_padding)
    n_keys = 2 * window + 1 if not causal else window + 1
    scores = q @ k.transpose(-2, -1) / math.sqrt(n_keys)  # "scaled by the keys a query sees"
    return _safe_softmax(scores, allowed) @ v


# ---------------------------------------------------------------- correct variants


def banded_package_attention(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    """The package's attention under a band mask built from tril and triu."""
    T = q.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool, device=q.device)
    band = ones.tril(0 if causal else window).triu(-window)
    if key_padding is not None:
        band = band & key_padding[:, None, None, :]
    return attention(q, k, v, mask=band)[0]


def banded_per_frame_loop(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    """A Python loop over the query frames, each attending to its slice of keys."""
    B, H, T, Dh = q.shape
    outs = []
    for t in range(T):
        lo, hi = max(0, t - window), (t + 1 if causal else min(T, t + window + 1))
        s = (q[:, :, t : t + 1] @ k[:, :, lo:hi].transpose(-2, -1)) / Dh**0.5  # (B, H, 1, n)
        if key_padding is not None:
            real = key_padding[:, None, None, lo:hi]
            has = real.any(-1, keepdim=True)
            s = s.masked_fill(~real, float("-inf")).masked_fill(~has, 0.0)
            w = torch.where(has, s.softmax(-1), torch.zeros_like(s))
        else:
            w = s.softmax(-1)
        outs.append(w @ v[:, :, lo:hi])
    return torch.cat(outs, dim=2)


def banded_nan_to_num(q, k, v, window, causal=False, key_padding=None) -> Tensor:
    """-inf fill and a plain softmax; the NaN rows of frames without a key set to zero with
    torch.nan_to_num (their scores are all masked, so no gradient flows through them)."""
    d = _offsets(q.shape[-2], q.device)
    allowed = _padding((d.abs() <= window) & (d >= 0 if causal else True), key_padding)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v


CASES = [
    BlindCase(
        CHECK,
        "abs_forgotten",
        banded_no_abs,
        "mistake",
        "Two-sided, I wrote (t - s) <= window without abs(), so a frame sees the whole "
        "future and only window frames of the past.",
    ),
    BlindCase(
        CHECK,
        "causal_without_window",
        banded_causal_without_window,
        "mistake",
        "With causal=True I use the plain causal mask s <= t and forget the window, so a "
        "frame sees the whole past.",
    ),
    BlindCase(
        CHECK,
        "minus_1e9_fill",
        banded_minus_1e9,
        "mistake",
        "I fill the masked scores with -1e9 and take a plain softmax, so a frame that sees "
        "no key averages all the values instead of returning zeros.",
    ),
    BlindCase(
        CHECK,
        "window_as_total_width",
        banded_window_as_width,
        "mistake",
        "I read window as the width of the band, window // 2 frames on each side.",
    ),
    BlindCase(
        CHECK,
        "padding_zeroed_after_softmax",
        banded_zero_padded_weights,
        "mistake",
        "I multiply the attention weights by the padding mask after the softmax, so the "
        "weights of a row near padding no longer sum to 1.",
    ),
    BlindCase(
        CHECK,
        "padding_scores_multiplied",
        banded_padding_scores_multiplied,
        "mistake",
        "I multiplied the scores by the padding mask, so a padding key gets a score of 0 "
        "instead of being hidden.",
    ),
    BlindCase(
        CHECK,
        "softmax_over_queries",
        banded_softmax_over_queries,
        "mistake",
        "I took the softmax over dim=-2, the queries, instead of the keys.",
    ),
    BlindCase(
        CHECK,
        "unfold_zero_padding_as_keys",
        banded_unfold_zero_pad,
        "mistake",
        "I padded k and v with w zero frames at both ends and unfolded windows of 2w + 1 "
        "keys, but never masked those zero frames, so the frames near the ends attend to "
        "them (and padding outside the sequence counts as real).",
    ),
    BlindCase(
        CHECK,
        "window_zero_shortcut",
        banded_window_zero_shortcut,
        "mistake",
        "For window = 0 I return v directly (each frame sees only itself), which ignores "
        "the padding: a padding frame should get zeros.",
    ),
    BlindCase(
        CHECK,
        "scaled_by_window_size",
        banded_scaled_by_window,
        "mistake",
        "I scaled the scores by 1 / sqrt(number of keys in the window) instead of 1 / sqrt(Dh).",
    ),
    BlindCase(
        CHECK,
        "package_attention_band",
        banded_package_attention,
        "correct",
        "The package's attention with a band mask made with tril/triu, ANDed with the "
        "padding mask.",
    ),
    BlindCase(
        CHECK,
        "per_frame_loop",
        banded_per_frame_loop,
        "correct",
        "A loop over the query frames, each attending to its slice of keys; a frame whose "
        "keys are all padding gets zeros.",
    ),
    BlindCase(
        CHECK,
        "nan_to_num_empty_rows",
        banded_nan_to_num,
        "correct",
        "-inf fill and a plain softmax; the NaN rows of frames that see no key replaced by "
        "zeros with torch.nan_to_num.",
    ),
]
