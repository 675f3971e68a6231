"""Mistakes in banded local attention (chapter 20), written the ways a reader writes it: a band
mask on the full score matrix, keys gathered per frame, or a sliding window of keys."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_tutorial import check
from transformer_tutorial.attention import attention
from transformer_tutorial.local_attention import band_mask, local_attention

from . import Correct, Mistake

CHECK = check.check_banded_attention


def _softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """Softmax over the keys, masked keys 0, a row with no key all zeros."""
    scores = scores.masked_fill(~mask, float("-inf"))
    seen = mask.any(-1, keepdim=True)
    return torch.where(seen, scores, 0.0).softmax(-1) * seen


def _by_band(lo, hi, *, scale=True, pad="keys", nan_rows=False):
    """A reader's band-masked full attention: frame t sees keys s with lo(w, causal) <= s - t <=
    hi(w, causal); ``pad`` says how key_padding is used (``"keys"``, ``"ignored"``,
    ``"inverted"``, ``"queries"``)."""

    def fn(q, k, v, window, causal=False, key_padding=None):
        T, Dh = q.shape[-2], q.shape[-1]
        t = torch.arange(T)
        diff = t[None, :] - t[:, None]  # (T, T): s - t
        mask = (diff >= lo(window, causal)) & (diff <= hi(window, causal))  # (T, T)
        if key_padding is not None and pad != "ignored":
            real = ~key_padding if pad == "inverted" else key_padding
            mask = mask & (real[:, None, :, None] if pad == "queries" else real[:, None, None, :])
        scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
        if scale:
            scores = scores / math.sqrt(Dh)
        if nan_rows:  # -inf and softmax, nothing more: a row with no key is 0/0
            weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
        else:
            weights = _softmax(scores, mask.expand_as(scores))
        return weights @ v  # (B, H, T, Dv)

    return fn


def _past(w: int, causal: bool) -> int:
    return -w


def _future(w: int, causal: bool) -> int:
    return 0 if causal else w


def _gathered(edge: str):
    """Keys gathered per frame, t - w .. t + w, with a wrong treatment of the missing ones."""

    def fn(q, k, v, window, causal=False, key_padding=None):
        T, Dh = q.shape[-2], q.shape[-1]
        offsets = torch.arange(-window, (0 if causal else window) + 1)
        index = torch.arange(T)[:, None] + offsets  # (T, width)
        index = index.clamp(0, T - 1) if edge == "clamp" else index % T
        keys, values = k[:, :, index], v[:, :, index]  # (B, H, T, width, Dh)
        scores = torch.einsum("bhtd,bhtwd->bhtw", q, keys) / math.sqrt(Dh)
        mask = torch.ones_like(scores, dtype=torch.bool)
        if key_padding is not None:
            mask = key_padding[:, index][:, None]  # (B, 1, T, width)
        return torch.einsum("bhtw,bhtwd->bhtd", _softmax(scores, mask.expand_as(scores)), values)

    return fn


def _sliding(mask_edges: bool):
    """A sliding window of keys: pad w frames in front (and behind), unfold, score."""

    def fn(q, k, v, window, causal=False, key_padding=None):
        B, H, T, Dh = q.shape
        ahead = 0 if causal else window
        width = window + 1 + ahead
        keys = F.pad(k, (0, 0, window, ahead)).unfold(2, width, 1)  # (B, H, T, Dh, width)
        values = F.pad(v, (0, 0, window, ahead)).unfold(2, width, 1)  # (B, H, T, Dv, width)
        scores = (q.unsqueeze(-2) @ keys).squeeze(-2) / math.sqrt(Dh)  # (B, H, T, width)
        real = torch.ones(B, T, dtype=torch.bool) if key_padding is None else key_padding
        real = F.pad(real, (window, ahead), value=not mask_edges).unfold(1, width, 1)
        weights = _softmax(scores, real[:, None].expand_as(scores))  # (B, H, T, width)
        return (weights.unsqueeze(-2) @ values.transpose(-2, -1)).squeeze(-2)  # (B, H, T, Dv)

    return fn


def _by_loops(q, k, v, window, causal=False, key_padding=None):
    """One frame at a time, its keys listed by hand."""
    B, H, T, Dh = q.shape
    out = torch.zeros(B, H, T, v.shape[-1], dtype=v.dtype)
    for b in range(B):
        for t in range(T):
            keys = [
                s
                for s in range(max(0, t - window), min(T, t + window + 1))
                if (not causal or s <= t) and (key_padding is None or key_padding[b, s])
            ]
            if keys:
                scores = q[b, :, t : t + 1] @ k[b, :, keys].transpose(-2, -1) / math.sqrt(Dh)
                out[b, :, t] = (scores.softmax(-1) @ v[b, :, keys])[:, 0]
    return out


def _full_with_band(q, k, v, window, causal=False, key_padding=None):
    """The book's full attention under the band mask: the T x T price, the right values."""
    mask = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q, k, v, mask)[0]


def _sdpa_with_band(q, k, v, window, causal=False, key_padding=None):
    mask = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _with_weights(q, k, v, window, causal=False, key_padding=None):
    """Returning ``(out, weights)`` as the book's ``attention`` does: the exercise returns out."""
    mask = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q.float(), k.float(), v.float(), mask)  # float32 is fine


def banded_scaled_by_dv(q, k, v, window, causal=False, key_padding=None):
    """The scores divided by sqrt(d_v), the values' size, instead of sqrt(Dh)."""
    mask = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :]
    return attention(q, k, v, mask, scale=v.shape[-1] ** -0.5)[0]


def banded_padding_both_axes(q, k, v, window, causal=False, key_padding=None):
    """key_padding laid on the queries as well as the keys: a padding frame sees no key."""
    mask = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        mask = mask & key_padding[:, None, None, :] & key_padding[:, None, :, None]
    return attention(q, k, v, mask)[0]


def banded_minus_1e9(q, k, v, window, causal=False, key_padding=None):
    """A -1e9 fill: a frame whose keys are all padding attends to all of them."""
    allowed = band_mask(q.shape[-2], window, causal)
    if key_padding is not None:
        allowed = allowed & key_padding[:, None, None, :]
    scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(~allowed, -1e9)
    return scores.softmax(-1) @ v


MISTAKES = [
    Mistake(
        check.check_banded_attention,
        "banded-minus-1e9",
        banded_minus_1e9,
        "(-1e9) instead of -inf",
        mistake="softmax-minus-1e9",
    ),
    Mistake(
        CHECK,
        "banded-too-narrow",
        _by_band(lambda w, c: -w + 1, lambda w, c: 0 if c else w - 1),
        "one frame too narrow",
    ),
    Mistake(
        CHECK,
        "banded-too-wide",
        _by_band(lambda w, c: -w - 1, lambda w, c: 0 if c else w + 1),
        "one frame too wide",
    ),
    Mistake(
        CHECK,
        "banded-range-end-exclusive",
        _by_band(_past, lambda w, c: 0 if c else w - 1),
        "a Python range's end is exclusive",
    ),
    Mistake(
        CHECK,
        "banded-one-sided",
        _by_band(_past, lambda w, c: 0),
        "your band is one-sided: with causal=False",
    ),
    Mistake(
        CHECK,
        "banded-ahead-only",
        _by_band(lambda w, c: 0, lambda w, c: w),
        "one-sided and looks ahead",
    ),
    Mistake(
        CHECK, "banded-ignores-causal", _by_band(_past, lambda w, c: w), "must not see the future"
    ),
    Mistake(
        CHECK,
        "banded-causal-wrong-axis",
        _by_band(lambda w, c: 0 if c else -w, lambda w, c: w),
        "the band is laid along the wrong axis",
    ),
    Mistake(
        CHECK,
        "banded-causal-excludes-self",
        _by_band(_past, lambda w, c: -1 if c else w),
        "frame t does not see itself",
    ),
    Mistake(
        CHECK,
        "banded-no-band",
        _by_band(lambda w, c: -(10**6), lambda w, c: 10**6),
        "there is no band",
    ),
    Mistake(
        CHECK,
        "banded-edges-zero-padding",
        _sliding(mask_edges=False),
        "the zero padding you add in front of",
    ),
    Mistake(
        CHECK, "banded-edges-clamped", _gathered("clamp"), "the nearest frame is counted again"
    ),
    Mistake(CHECK, "banded-edges-wrap-around", _gathered("wrap"), "the band wraps around"),
    Mistake(
        CHECK,
        "banded-padding-ignored",
        _by_band(_past, _future, pad="ignored"),
        "key_padding is not used",
    ),
    Mistake(
        CHECK,
        "banded-padding-polarity",
        _by_band(_past, _future, pad="inverted"),
        "key_padding polarity",
    ),
    Mistake(
        CHECK,
        "banded-padding-on-queries",
        _by_band(_past, _future, pad="queries"),
        "masks the queries instead of the keys",
    ),
    Mistake(
        CHECK,
        "banded-scaled-by-dv",
        banded_scaled_by_dv,
        "by sqrt(d_v) = sqrt(6)",
        mistake="attention-sqrt-dv",
    ),
    Mistake(
        CHECK,
        "banded-padding-on-both-axes",
        banded_padding_both_axes,
        "by a mask on the queries too",
        mistake="banded-padding-outputs-zeroed",
    ),
    Mistake(
        CHECK, "banded-nan-row", _by_band(_past, _future, nan_rows=True), "your output contains NaN"
    ),
    Mistake(
        CHECK,
        "banded-unscaled",
        _by_band(_past, _future, scale=False),
        "you forgot to divide the scores by sqrt(Dh)",
    ),
]


def _without_padding(q, k, v, window, causal=False):
    """No ``key_padding`` argument: the check cannot call it as the book's function."""
    return _full_with_band(q, k, v, window, causal)


MISTAKES += [
    # accepted until B29; the exercise returns the output alone
    Mistake(
        CHECK,
        "banded-float32-with-weights",
        _with_weights,
        "returns the output alone",
        mistake="banded-returns-pair",
    ),  # fmt: skip
    Mistake(CHECK, "banded-no-key-padding-argument", _without_padding, "key_padding"),
]

CORRECT = [
    Correct(CHECK, "banded-full-attention-with-band-mask", _full_with_band),
    Correct(CHECK, "banded-sdpa-with-band-mask", _sdpa_with_band),
    Correct(CHECK, "banded-book-blocked-local-attention", local_attention),
    Correct(CHECK, "banded-by-loops", _by_loops),
    Correct(CHECK, "banded-sliding-window", _sliding(mask_edges=True)),
    Correct(CHECK, "banded-by-offsets", _by_band(_past, _future)),
]
